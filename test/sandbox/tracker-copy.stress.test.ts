// SPEC 21.1, session 34 (sandbox adversary): the agent's tracker copy lives in a
// directory the agent writes, and helix reads it OUTSIDE the sandbox after every call.
// A hostile agent replaces it with a symlink to a file the sandbox hides from it (a
// JSONL file in the operator's home): before the fix helix followed the link and
// imported that file's beads into the project's tracker. Or with a FIFO: helix's read
// blocked forever, and the run ignored even SIGTERM. Now neither is read; the run ends.
// With --remote the tracker committed as a symlink is refused when the work is
// collected, before helix's worktree (whose tracker is the attempt's copy) takes it.
// The --remote case (a whole fleet set-up, ~10 s) runs under `npm run test:stress`
// (HELIX_STRESS_FULL=1, in .ci/run) only; the other two run in `npm test` too.
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {gitSeq} from '../support/git.js'
import {g, hasBwrap, q, runUntil, sandboxAgent} from './helpers.js'

const itFull = STRESS_FULL ? it : it.skip

const SECRET = JSON.stringify({id: 'secret-1', title: 'a bead from the operator home', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'})

function setup(attack: string) {
  const base = makeTempDir('helix-sbx-copy-')
  const root = path.join(base, 'repo')
  const home = path.join(base, 'home')
  const stub = path.join(base, 'stub')
  for (const d of [path.join(root, '.ddx'), home, stub]) mkdirSync(d, {recursive: true})
  const secret = path.join(home, 'private.jsonl')
  writeFileSync(secret, SECRET + '\n')
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), JSON.stringify({id: 'tc-a', title: 'bead a', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'}) + '\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  const {env} = sandboxAgent(stub, home, [
    'echo work > work.txt && git add work.txt && git commit -q -m work || exit 1',
    'helix tracker close "$HELIX_BEAD_ID" || exit 1',
    'f="$DDX_BEAD_DIR/beads.jsonl"',
    attack.replace('$SECRET', q(secret)),
  ])
  return {root, secret, env}
}

// the first attempt shows it (the three after it would repeat it before the bead is blocked)
const run = (p: {root: string; env: NodeJS.ProcessEnv}) => runUntil(['run', '--sandbox', '--no-auto-review', '--no-auto-align'], {cwd: p.root, env: p.env}, /cycle 1 did not complete/)
const ids = (root: string) => readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as {id: string}).id).sort()

describe.skipIf(!hasBwrap)("helix run --sandbox: the agent's tracker copy is read without following it", () => {
  it('a copy replaced by a symlink to a hidden file: nothing of that file reaches the tracker', async () => {
    const p = setup('rm -f "$f" && ln -s $SECRET "$f"')
    const r = await run(p)
    expect(r.signal, r.output).toBeNull()
    expect(r.output).toMatch(/cycle 1 did not complete/)
    expect(ids(p.root)).toEqual(['tc-a'])
    expect(readFileSync(p.secret, 'utf8')).toBe(SECRET + '\n')
  }, 120_000)

  it('a copy replaced by a FIFO: the run does not hang on it', async () => {
    const p = setup('rm -f "$f" && mkfifo "$f"')
    // before the fix the read blocked for good: the first attempt never ended (the wait for its line
    // times out), and SIGTERM did not end the run either (the rig kills it after the test)
    const r = await run(p)
    expect(r.signal, r.output).toBeNull()
    expect(ids(p.root)).toEqual(['tc-a'])
  }, 120_000)

  itFull('--remote: a commit that turns the tracker into a symlink is refused when collected, and nothing of its target lands', async () => {
    const p = setup('git rm -q .ddx/beads.jsonl && mkdir -p .ddx && ln -s $SECRET .ddx/beads.jsonl && git add -f .ddx/beads.jsonl && git commit -q -m link')
    const remote = path.join(path.dirname(p.root), 'remote.git')
    g(path.dirname(p.root), 'init', '-q', '--bare', '-b', 'main', remote)
    g(p.root, 'remote', 'add', 'origin', remote)
    g(p.root, 'push', '-q', 'origin', 'main')
    const tip0 = g(remote, 'rev-parse', 'main')
    const r = await runCli(['run', '--sandbox', '--remote', 'origin', '--no-auto-review', '--no-auto-align'], {cwd: p.root, env: p.env, timeoutMs: 120_000})
    expect(r.signal, r.stdout + r.stderr).toBeNull()
    expect(r.stdout + r.stderr).toMatch(/the attempt's commits touch the tracker \(\.ddx\/beads\.jsonl\)/)
    // the base carries no work of the attempt and no bead of the hidden file
    expect(g(remote, 'log', '--format=%s', `${tip0}..main`)).not.toMatch(/work|link/)
    expect(g(remote, 'show', 'main:.ddx/beads.jsonl')).not.toContain('secret-1')
  }, 150_000)
})
