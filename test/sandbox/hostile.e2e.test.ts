// SPEC 21.3: a hostile command agent under `helix run --sandbox --workers 2`.
// The agent does its bead's work (commit, close) and then tries eight acts against
// what lies outside its attempt: the root checkout, $HOME, /etc, the root's refs,
// config and hooks, the on-disk remote, the operator's ssh key. Each act's result
// goes to stdout (`ACT <bead> <act> ok|fail`), which helix echoes. With --sandbox
// every act fails, every bead lands with its own work only, and the hashes of the
// root's refs/config/hooks/README, the remote and the fake $HOME are unchanged.
// The same run without --sandbox shows the acts succeed, so the test can fail.
import {createHash} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {testEnv} from '../support/env.js'
import {g, hasBwrap} from './helpers.js'
import {gitSeq} from '../support/git.js'

const ACTS = ['readme', 'home', 'etc', 'update-ref', 'hooks-path', 'pre-commit', 'push', 'ssh-key']
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0

/** a digest of every file under `dir` (paths and contents), in a stable order */
function treeHash(dir: string): string {
  const h = createHash('sha256')
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name)
      const st = statSync(p)
      h.update(`${path.relative(dir, p)}\0${st.mode}\0`)
      if (st.isDirectory()) walk(p)
      else h.update(readFileSync(p))
    }
  }
  if (existsSync(dir)) walk(dir)
  return h.digest('hex')
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

function setup(tag: string) {
  const base = makeTempDir('helix-sandbox-')
  const root = path.join(base, 'repo')
  const home = path.join(base, 'home')
  const remote = path.join(base, 'remote.git')
  const stub = path.join(base, 'stub')
  const etcFile = `/etc/helix-pwned-${tag}-${process.pid}`
  for (const d of [path.join(root, '.ddx'), path.join(home, '.ssh'), stub]) mkdirSync(d, {recursive: true})
  writeFileSync(path.join(home, '.ssh', 'id_rsa'), '-----BEGIN FAKE KEY-----\nsecret\n')
  g(base, 'init', '-q', '--bare', remote)
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  writeFileSync(path.join(root, 'README.md'), 'readme\n')
  // the acceptance gate is the project's code, run from the attempt's copy: confined too (it passes only when its write outside fails)
  mkdirSync(path.join(root, 'scripts'))
  writeFileSync(path.join(root, 'scripts', 'check-acceptance-sb.sh'), `#!/bin/sh\nif ( echo x > ${q(path.join(root, 'gate-pwned'))} ) 2>/dev/null; then exit 1; fi\nexit 0\n`)
  chmodSync(path.join(root, 'scripts', 'check-acceptance-sb.sh'), 0o755)
  const beads = ['sb-a', 'sb-b'].map((id, i) => JSON.stringify({id, title: `bead ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:0${i}Z`}))
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), beads.join('\n') + '\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  g(root, 'remote', 'add', 'origin', remote)
  g(root, 'push', '-q', 'origin', 'main')
  const agent = path.join(stub, 'agent')
  const act = (name: string, cmd: string) => `if ( ${cmd} ) >/dev/null 2>&1; then echo "ACT $id ${name} ok"; else echo "ACT $id ${name} fail"; fi`
  writeFileSync(
    agent,
    [
      '#!/bin/sh',
      'if [ "$HELIX_ACTION" = check ]; then echo "NEXT_ACTION: STOP"; exit 0; fi',
      // the review preflight (HELIX_AGENT_CHECK=1, a throw-away project) is an agent call too
      `if [ "$HELIX_AGENT_CHECK" = 1 ]; then ( echo x > ${q(path.join(root, 'preflight-pwned'))} ) 2>/dev/null; fi`,
      'if [ "$HELIX_ACTION" = review ]; then echo "REVIEW_STATUS: CLEAN"; echo "ISSUES_COUNT: 0"; echo "FINDINGS_FILED: 0"; exit 0; fi',
      '[ "$HELIX_ACTION" = implementation ] || exit 0',
      'id=$HELIX_BEAD_ID',
      'echo "work of $id" > "work-$id.txt"',
      'git add "work-$id.txt" && git commit -q -m "work on $id" || exit 1',
      'helix tracker close "$id" || exit 1',
      'sha=$(git rev-parse HEAD)',
      act('readme', `echo pwned >> ${q(path.join(root, 'README.md'))}`),
      act('home', 'echo pwned > "$HOME/pwned"'),
      act('etc', `echo pwned > ${q(etcFile)}`),
      act('update-ref', `git --git-dir=${q(path.join(root, '.git'))} update-ref refs/heads/main "$sha"`),
      act('hooks-path', `git --git-dir=${q(path.join(root, '.git'))} config core.hooksPath /tmp`),
      act('pre-commit', `printf '#!/bin/sh\\nexit 0\\n' > ${q(path.join(root, '.git', 'hooks', 'pre-commit'))}`),
      act('push', `git push -q ${q(remote)} "HEAD:refs/heads/evil-$id"`),
      act('ssh-key', 'cat "$HOME/.ssh/id_rsa"'),
      'exit 0',
      '',
    ].join('\n'),
  )
  chmodSync(agent, 0o755)
  const env = testEnv({HOME: home, HELIX_AGENT: agent, HELIX_BACKOFF_SLEEP: '0', GIT_CONFIG_NOSYSTEM: '1'})
  delete env.GIT_CONFIG_GLOBAL
  const snapshot = () => ({
    readme: readFileSync(path.join(root, 'README.md'), 'utf8'),
    config: readFileSync(path.join(root, '.git', 'config'), 'utf8'),
    hooks: treeHash(path.join(root, '.git', 'hooks')),
    refs: g(root, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/tags', 'refs/remotes'),
    remote: `${g(remote, 'for-each-ref', '--format=%(refname) %(objectname)')}\n${treeHash(path.join(remote, 'objects'))}`,
    home: treeHash(home),
    etc: existsSync(etcFile),
  })
  return {root, env, etcFile, snapshot, cleanup: () => rmSync(etcFile, {force: true})}
}

function acts(stdout: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of stdout.matchAll(/ACT (sb-[ab]) ([a-z-]+) (ok|fail)/g)) out.set(`${m[1]} ${m[2]}`, m[3])
  return out
}

describe.skipIf(!hasBwrap)('helix run --sandbox with a hostile agent (SPEC 21.3)', () => {
  it('every hostile act fails, both beads land with their own work only, nothing outside changed', async () => {
    const p = setup('sb')
    try {
      const before = p.snapshot()
      const tip0 = g(p.root, 'rev-parse', 'main')
      // review on: its change count (a confined git) finds the one-line change, and the review runs in the clone
      const r = await runCli(['run', '--sandbox', '--workers', '2', '--review-threshold', '1', '--no-auto-align'], {cwd: p.root, env: p.env, timeoutMs: 120_000})
      expect(r.code, r.stderr + r.stdout).toBe(0)
      expect(r.stdout + r.stderr).toMatch(/post-implementation review of sb-a/)
      expect(existsSync(path.join(p.root, 'gate-pwned'))).toBe(false)
      expect(existsSync(path.join(p.root, 'preflight-pwned'))).toBe(false)
      const seen = acts(r.stdout)
      for (const id of ['sb-a', 'sb-b']) for (const a of ACTS) expect(seen.get(`${id} ${a}`), `${id} ${a}`).toBe('fail')
      expect(p.snapshot()).toEqual(before)
      // each bead landed with its own commit, touching only its own file
      const commits = g(p.root, 'rev-list', '--reverse', `${tip0}..main`).split('\n')
      expect(commits).toHaveLength(2)
      const touched = commits.map((c) => g(p.root, 'diff-tree', '--no-commit-id', '--name-only', '-r', c)).sort()
      expect(touched).toEqual(['work-sb-a.txt', 'work-sb-b.txt'])
      const beads = readFileSync(path.join(p.root, '.ddx', 'beads.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {id: string; status: string})
      expect(beads.map((b) => `${b.id} ${b.status}`).sort()).toEqual(['sb-a closed', 'sb-b closed'])
      // the run says it was sandboxed (SPEC 21.2)
      const hist = readFileSync(path.join(p.root, '.helix-logs', 'runs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {flags: Record<string, unknown>})
      expect(hist.at(-1)?.flags.sandbox).toBe(true)
      // nothing of the sandboxes is left behind
      expect(existsSync(path.join(p.root, '.helix', 'sandbox')) ? readdirSync(path.join(p.root, '.helix', 'sandbox')) : []).toEqual([])
    } finally {
      p.cleanup()
    }
  }, 150_000)

  it('the same agent without --sandbox succeeds at the acts (so the test above can fail)', async () => {
    const p = setup('nosb')
    try {
      const before = p.snapshot()
      const r = await runCli(['run', '--workers', '2', '--review-threshold', '1', '--no-auto-align'], {cwd: p.root, env: p.env, timeoutMs: 120_000})
      expect(r.stdout).toContain('closed sb-a')
      const seen = acts(r.stdout)
      const expected = ACTS.filter((a) => a !== 'etc' || isRoot)
      for (const a of expected) expect(['sb-a', 'sb-b'].some((id) => seen.get(`${id} ${a}`) === 'ok'), `${a}: ${r.stdout}`).toBe(true)
      expect(p.snapshot()).not.toEqual(before)
      expect(existsSync(path.join(p.root, 'gate-pwned'))).toBe(true)
      expect(existsSync(path.join(p.root, 'preflight-pwned'))).toBe(true)
    } finally {
      p.cleanup()
    }
  }, 150_000)
})
