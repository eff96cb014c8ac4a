// SPEC 21.1 end to end: with --sandbox the queue drains to an alignment that runs in a
// private clone of its own. It files a bead (through its tracker copy) and commits a
// doc change; both land (the bead in the real tracker, the commit on the base by
// fast-forward), while its writes outside the clone (the root checkout, the real
// tracker, the root's refs) fail. `check` runs with nothing writable: its write into
// the real tracker directory fails too. The filed bead is then built like any other.
// The one-shot commands (align, check) run in-process (test/support/in-process.ts): what
// their sandboxed agent could do is the point, not helix's own process.
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {helixInProcess} from '../support/in-process.js'
import {testEnv} from '../support/env.js'
import {g, hasBwrap, q} from './helpers.js'
import {gitSeq} from '../support/git.js'


function setup() {
  const base = makeTempDir('helix-sbdrain-')
  const root = path.join(base, 'repo')
  const home = path.join(base, 'home')
  const stub = path.join(base, 'stub')
  for (const d of [path.join(root, '.ddx'), path.join(root, 'docs'), home, stub]) mkdirSync(d, {recursive: true})
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  writeFileSync(path.join(root, 'README.md'), 'readme\n')
  writeFileSync(path.join(root, 'docs', 'plan.md'), 'plan\n')
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), JSON.stringify({id: 'da-1', title: 'first', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'}) + '\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  const act = (name: string, cmd: string) => `if ( ${cmd} ) >/dev/null 2>&1; then echo "ACT $HELIX_ACTION ${name} ok"; else echo "ACT $HELIX_ACTION ${name} fail"; fi`
  const agent = path.join(stub, 'agent')
  writeFileSync(
    agent,
    [
      '#!/bin/sh',
      'if [ "$HELIX_ACTION" = check ]; then',
      act('tracker-dir', `echo x > ${q(path.join(root, '.ddx', 'check-pwned'))}`),
      // ALIGN until the alignment's bead exists (the check reads the real tracker), then STOP
      '  if helix tracker list 2>/dev/null | grep -q "filed by alignment"; then echo "NEXT_ACTION: STOP"; else echo "NEXT_ACTION: ALIGN"; fi',
      '  exit 0',
      'fi',
      'if [ "$HELIX_ACTION" = alignment ]; then',
      act('readme', `echo pwned >> ${q(path.join(root, 'README.md'))}`),
      act('real-tracker', `echo '{}' >> ${q(path.join(root, '.ddx', 'beads.jsonl'))}`),
      act('update-ref', `git --git-dir=${q(path.join(root, '.git'))} update-ref refs/heads/evil HEAD`),
      // idempotent: a second alignment (after the filed bead is built) finds nothing to do
      '  if ! helix tracker list | grep -q "filed by alignment"; then',
      '    helix tracker create "filed by alignment" --type task --priority 1 >/dev/null || exit 1',
      '    echo "aligned" >> docs/plan.md',
      '    git add docs/plan.md && git commit -q -m "docs: aligned the plan" || exit 1',
      '  fi',
      '  exit 0',
      'fi',
      '[ "$HELIX_ACTION" = implementation ] || exit 0',
      'echo "work of $HELIX_BEAD_ID" > "work-$HELIX_BEAD_ID.txt"',
      'git add -A && git commit -q -m "work on $HELIX_BEAD_ID" || exit 1',
      'helix tracker close "$HELIX_BEAD_ID" || exit 1',
      '',
    ].join('\n'),
  )
  chmodSync(agent, 0o755)
  const env = testEnv({HOME: home, HELIX_AGENT: agent, HELIX_BACKOFF_SLEEP: '0', GIT_CONFIG_NOSYSTEM: '1'})
  delete env.GIT_CONFIG_GLOBAL
  return {root, env}
}

describe.skipIf(!hasBwrap)('helix run --sandbox: drain actions (SPEC 21.1)', () => {
  it('an alignment in its own clone files a bead and commits a doc change; both land, its writes outside fail; check writes nothing', async () => {
    const p = setup()
    const tip0 = g(p.root, 'rev-parse', 'main')
    const r = await runCli(['run', '--sandbox', '--no-auto-review', '--max-cycles', '5'], {cwd: p.root, env: p.env, timeoutMs: 120_000})
    const all = r.stdout + r.stderr
    expect(r.code, all).toBe(0)
    // the hostile acts failed, in the alignment and in the check
    expect(all).toMatch(/ACT alignment readme fail/)
    expect(all).toMatch(/ACT alignment real-tracker fail/)
    expect(all).toMatch(/ACT alignment update-ref fail/)
    expect(all).toMatch(/ACT check tracker-dir fail/)
    expect(all).not.toMatch(/ACT \w+ [\w-]+ ok/)
    expect(readFileSync(path.join(p.root, 'README.md'), 'utf8')).toBe('readme\n')
    expect(existsSync(path.join(p.root, '.ddx', 'check-pwned'))).toBe(false)
    expect(g(p.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/evil')).toBe('')
    // the alignment's commit landed on the base by fast-forward, and the checkout has it
    const subjects = g(p.root, 'log', '--format=%s', `${tip0}..main`).split('\n')
    expect(subjects).toContain('docs: aligned the plan')
    expect(g(p.root, 'merge-base', '--is-ancestor', tip0, 'main')).toBe('')
    expect(readFileSync(path.join(p.root, 'docs', 'plan.md'), 'utf8')).toBe('plan\naligned\n')
    expect(all).toMatch(/the alignment action's 1 commit\(s\) landed/)
    // the filed bead reached the real tracker (no claim fields) and was built; the first bead too
    const beads = readFileSync(path.join(p.root, '.ddx', 'beads.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    const filed = beads.find((b) => b.title === 'filed by alignment')
    expect(filed, JSON.stringify(beads)).toBeDefined()
    expect(filed?.status).toBe('closed')
    expect(beads.find((b) => b.id === 'da-1')?.status).toBe('closed')
    expect(subjects).toContain(`work on ${String(filed?.id)}`)
    // nothing of the clones is left: no sandbox, no worktree, no helix branch
    expect(existsSync(path.join(p.root, '.helix', 'sandbox')) ? readdirSync(path.join(p.root, '.helix', 'sandbox')) : []).toEqual([])
    expect(g(p.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
  }, 150_000)

  it('the one-shot commands in a project with sandbox: true: align edits the checkout but cannot commit; check writes nothing', async () => {
    const p = setup()
    mkdirSync(path.join(p.root, '.helix'), {recursive: true})
    writeFileSync(path.join(p.root, '.helix', 'config.json'), JSON.stringify({sandbox: true}))
    const agent = p.env.HELIX_AGENT as string
    writeFileSync(
      agent,
      [
        '#!/bin/sh',
        'if [ "$HELIX_ACTION" = check ]; then',
        `  ( echo x > ${q(path.join(p.root, 'check-pwned'))} ) 2>/dev/null && echo "ACT check root ok" || echo "ACT check root fail"`,
        '  echo "NEXT_ACTION: STOP"; exit 0',
        'fi',
        'echo edited >> README.md && echo "ACT align edit ok" || echo "ACT align edit fail"',
        '( git commit -qam "by the agent" ) >/dev/null 2>&1 && echo "ACT align commit ok" || echo "ACT align commit fail"',
        'echo x > "$HOME/x" 2>/dev/null && echo "ACT align home ok" || echo "ACT align home fail"',
        '',
      ].join('\n'),
    )
    const tip0 = g(p.root, 'rev-parse', 'main')
    const a = await helixInProcess(p.root, ['align'], p.env)
    expect(a.code, a.stdout + a.stderr).toBe(0)
    expect(a.stdout).toMatch(/ACT align edit ok/)
    expect(a.stdout).toMatch(/ACT align commit fail/)
    expect(a.stdout).toMatch(/ACT align home fail/)
    expect(readFileSync(path.join(p.root, 'README.md'), 'utf8')).toBe('readme\nedited\n')
    expect(g(p.root, 'rev-parse', 'main')).toBe(tip0)
    const c = await helixInProcess(p.root, ['check'], p.env)
    expect(c.stdout, c.stderr).toMatch(/ACT check root fail/)
    expect(existsSync(path.join(p.root, 'check-pwned'))).toBe(false)
    // the same project without the sandbox: the agent can commit (so the test can fail)
    writeFileSync(path.join(p.root, '.helix', 'config.json'), JSON.stringify({sandbox: false}))
    const b = await helixInProcess(p.root, ['align'], p.env)
    expect(b.stdout).toMatch(/ACT align commit ok/)
  }, 120_000)
})
