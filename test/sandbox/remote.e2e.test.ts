// SPEC 21.1 with SPEC 19: `helix run --sandbox --remote origin` against a bare
// repository on disk. The attempt works in a private clone made from the remote
// landing's worktree; its tracker copy starts from that worktree's tracker (the
// claim in it) and is taken back into it; the commit is fetched back through the
// confined upload-pack and lands on the remote's base with the bead closed. The
// agent's push to the remote from inside the sandbox fails.
import {chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {testEnv} from '../support/env.js'
import {g, hasBwrap, q} from './helpers.js'
import {gitSeq} from '../support/git.js'


describe.skipIf(!hasBwrap)('helix run --sandbox --remote', () => {
  it('lands a bead worked in a private clone on the remote base; a push from inside the sandbox fails', async () => {
    const base = makeTempDir('helix-sbremote-')
    const root = path.join(base, 'repo')
    const remote = path.join(base, 'remote.git')
    const home = path.join(base, 'home')
    const stub = path.join(base, 'stub')
    for (const d of [path.join(root, '.ddx'), home, stub]) mkdirSync(d, {recursive: true})
    g(base, 'init', '-q', '--bare', '-b', 'main', remote)
    gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
    writeFileSync(path.join(root, 'README.md'), 'readme\n')
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), JSON.stringify({id: 'rs-1', title: 'remote bead', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'}) + '\n')
    gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
    g(root, 'remote', 'add', 'origin', remote)
    g(root, 'push', '-q', 'origin', 'main')
    const agent = path.join(stub, 'agent')
    writeFileSync(
      agent,
      [
        '#!/bin/sh',
        'if [ "$HELIX_ACTION" = check ]; then echo "NEXT_ACTION: STOP"; exit 0; fi',
        '[ "$HELIX_ACTION" = implementation ] || exit 0',
        'echo "work of $HELIX_BEAD_ID" > "work-$HELIX_BEAD_ID.txt"',
        'git add "work-$HELIX_BEAD_ID.txt" && git commit -q -m "work on $HELIX_BEAD_ID" || exit 1',
        'helix tracker close "$HELIX_BEAD_ID" || exit 1',
        `( git push -q ${q(remote)} "HEAD:refs/heads/evil" ) >/dev/null 2>&1 && echo "ACT push ok" || echo "ACT push fail"`,
        '',
      ].join('\n'),
    )
    chmodSync(agent, 0o755)
    const env = testEnv({HOME: home, HELIX_AGENT: agent, HELIX_BACKOFF_SLEEP: '0', GIT_CONFIG_NOSYSTEM: '1'})
    delete env.GIT_CONFIG_GLOBAL
    const r = await runCli(['run', '--sandbox', '--remote', 'origin', '--no-auto-review', '--no-auto-align'], {cwd: root, env, timeoutMs: 120_000})
    const all = r.stdout + r.stderr
    expect(r.code, all).toBe(0)
    expect(all).toMatch(/ACT push fail/)
    expect(g(remote, 'for-each-ref', '--format=%(refname)', 'refs/heads/evil')).toBe('')
    // the work and the close are on the remote's base
    expect(g(remote, 'log', '--format=%s', 'main')).toContain('work on rs-1')
    expect(g(remote, 'show', 'main:work-rs-1.txt')).toBe('work of rs-1')
    const tracker = g(remote, 'show', 'main:.ddx/beads.jsonl')
    expect((JSON.parse(tracker.split('\n').find((l) => l.includes('"rs-1"')) ?? '{}') as {status?: string}).status).toBe('closed')
    // no claim ref and no sandbox left
    expect(g(remote, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('')
    expect(existsSync(path.join(root, '.helix', 'sandbox')) ? readdirSync(path.join(root, '.helix', 'sandbox')) : []).toEqual([])
  }, 150_000)
})
