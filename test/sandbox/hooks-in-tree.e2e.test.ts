// SPEC 21.1, session 34 (sandbox adversary): a project that keeps its git hooks in its
// own tree (`core.hooksPath=.githooks`, as husky and many teams do). The hostile agent
// commits hooks of its own there. Once its work is fetched into helix's worktree and
// landed in the operator's checkout, helix's own git (worktree add, the fast-forward,
// every ref update) runs those hooks: before the fix they ran outside the sandbox and
// wrote the marker directory below. Now every hook runs confined: the write outside
// fails, the write to the config's `sandboxWritable` works (so the hooks did run), and
// both beads land.
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {gitSeq} from '../support/git.js'
import {g, hasBwrap, q, sandboxAgent} from './helpers.js'

const HOOKS = ['post-checkout', 'post-merge', 'post-rewrite', 'pre-rebase', 'reference-transaction', 'post-commit']

function setup() {
  const base = makeTempDir('helix-sbx-hooks-')
  const root = path.join(base, 'repo')
  const out = path.join(base, 'escaped')
  const allowed = path.join(base, 'allowed')
  const stub = path.join(base, 'stub')
  for (const d of [path.join(root, '.ddx'), path.join(root, '.githooks'), path.join(root, '.helix'), out, allowed, stub, path.join(base, 'home')]) mkdirSync(d, {recursive: true})
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'], ['config', 'core.hooksPath', '.githooks'])
  writeFileSync(path.join(root, '.githooks', 'pre-commit'), '#!/bin/sh\nexit 0\n', {mode: 0o755})
  writeFileSync(path.join(root, 'README.md'), 'readme\n')
  // the confined hooks may write here (the agent's own writable paths): proof that they still run
  writeFileSync(path.join(root, '.helix', 'config.json'), JSON.stringify({sandboxWritable: [allowed]}))
  const beads = ['hk-a', 'hk-b'].map((id, i) => JSON.stringify({id, title: `bead ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:0${i}Z`}))
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), beads.join('\n') + '\n')
  gitSeq(root, ['add', '-A', '.ddx', '.githooks', 'README.md'], ['commit', '-q', '-m', 'initial'])
  const hook = (name: string) =>
    `printf '#!/bin/sh\\necho %s >> %s/%s 2>/dev/null\\necho %s >> %s/%s\\nexit 0\\n' "$id" ${q(out)} ${name} "$id" ${q(allowed)} ${name} > .githooks/${name} && chmod +x .githooks/${name}`
  const {env} = sandboxAgent(stub, path.join(base, 'home'), [
    'id=$HELIX_BEAD_ID',
    'echo "work of $id" > "work-$id.txt"',
    ...HOOKS.map(hook),
    'git add -A && git commit -q -m "work on $id" || exit 1',
    'helix tracker close "$id" || exit 1',
  ])
  return {root, out, allowed, env}
}

describe.skipIf(!hasBwrap)('helix run --sandbox with hooks kept in the project tree', () => {
  it("runs the agent's committed hooks only inside the sandbox; both beads land", async () => {
    const p = setup()
    const tip0 = g(p.root, 'rev-parse', 'main')
    const r = await runCli(['run', '--sandbox', '--no-auto-review', '--no-auto-align'], {cwd: p.root, env: p.env, timeoutMs: 120_000})
    expect(r.code, r.stderr + r.stdout).toBe(0)
    // nothing ran outside: the marker directory outside the sandbox is empty
    expect(readdirSync(p.out), r.stdout).toEqual([])
    // the hooks did run (confined): the worktree of the second bead was made from a base holding the
    // first bead's hooks, and every fast-forward and ref update ran them
    const ran = readdirSync(p.allowed)
    for (const h of ['post-checkout', 'post-merge', 'reference-transaction']) expect(ran, h).toContain(h)
    expect(readFileSync(path.join(p.allowed, 'post-merge'), 'utf8')).toContain('hk-a')
    // both beads landed, each with its own work
    const landed = g(p.root, 'log', '--format=%s', `${tip0}..main`).split('\n').sort()
    expect(landed).toEqual(['work on hk-a', 'work on hk-b'])
    expect(existsSync(path.join(p.root, 'work-hk-b.txt'))).toBe(true)
  }, 150_000)
})
