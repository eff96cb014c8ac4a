// SPEC 20.4 with --sandbox (21.1) end to end: the built CLI, real git, the real bwrap.
// Two beads whose agents replace the same line of one file, two workers, so both start
// from the same base; the second landing stops on a conflict, which goes back to its
// agent in its private clone. The scripted resolve keeps both lines. Both beads land,
// each implemented once, no conflict marker on the base, and the resolve ran confined:
// in its clone, and unable to write the project root. (rv-b's agent ends once rv-a has
// landed, so its landing meets the conflict when it rebases, before the land lock.)
// The red-check variant: one worker, a land check the agent's work fails; the resolve
// reads the check's log inside the sandbox (read-only) and fixes the work in its clone.
import {chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {testEnv} from '../support/env.js'
import {g, hasBwrap, q} from './helpers.js'
import {gitSeq} from '../support/git.js'

const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m
const IDS = ['rv-a', 'rv-b']

/** a git project on main with `shared.txt` and open beads `ids`; the agents may also write `state` (sandboxWritable) */
function project(ids: string[]) {
  const base = makeTempDir('helix-sbresolve-e2e-')
  const root = path.join(base, 'repo')
  const home = path.join(base, 'home')
  const stub = path.join(base, 'stub')
  // the agents' shared state (call log, the barrier): the one extra path they may write
  const state = path.join(base, 'state')
  for (const d of [path.join(root, '.ddx'), path.join(root, '.helix'), home, stub, state]) mkdirSync(d, {recursive: true})
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  writeFileSync(path.join(root, 'shared.txt'), 'start\n')
  writeFileSync(path.join(root, '.gitignore'), '.helix/\n')
  const bead = (id: string) => JSON.stringify({id, title: `bead ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'})
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), ids.map(bead).join('\n') + '\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  writeFileSync(path.join(root, '.helix', 'config.json'), JSON.stringify({sandboxWritable: [state]}))
  const agent = path.join(stub, 'agent')
  const env = testEnv({HOME: home, HELIX_AGENT: agent, HELIX_BACKOFF_SLEEP: '0', GIT_CONFIG_NOSYSTEM: '1'})
  delete env.GIT_CONFIG_GLOBAL
  return {root, state, agent, env}
}

describe.skipIf(!hasBwrap)('helix run --sandbox: a conflict goes back to the agent in its clone', () => {
  it('two beads on one line, two workers: both land, each implemented once, the resolve ran confined', async () => {
    const {root, state, agent, env} = project(IDS)
    writeFileSync(
      agent,
      [
        '#!/bin/sh',
        `S=${q(state)}`,
        'if [ "$HELIX_ACTION" = check ]; then echo "NEXT_ACTION: STOP"; exit 0; fi',
        'echo "$HELIX_ACTION $HELIX_BEAD_ID $(pwd)" >> "$S/calls"',
        'case "$HELIX_ACTION" in',
        'implementation)',
        '  echo "line by $HELIX_BEAD_ID" > shared.txt',
        '  git commit -q -am "work on $HELIX_BEAD_ID" || exit 1',
        '  helix tracker close "$HELIX_BEAD_ID" || exit 1',
        // both attempts start from the same base (rv-a ends once rv-b has committed); rv-b ends once rv-a has
        // landed (the project's .git is readable), so its landing finds the conflict when it rebases
        '  touch "$S/done-$HELIX_BEAD_ID"',
        '  i=0',
        '  if [ "$HELIX_BEAD_ID" = rv-a ]; then while [ ! -e "$S/done-rv-b" ] && [ $i -lt 1500 ]; do sleep 0.1; i=$((i+1)); done',
        `  else while ! git --git-dir=${q(path.join(root, '.git'))} log --format=%s main | grep -q "work on rv-a" && [ $i -lt 1500 ]; do sleep 0.1; i=$((i+1)); done; fi`,
        '  ;;',
        'resolve)',
        `  ( echo evil > ${q(path.join(root, 'evil-from-resolve.txt'))} ) 2>/dev/null && echo "root write ok" >> "$S/acts" || echo "root write fail" >> "$S/acts"`,
        '  git diff --name-only --diff-filter=U >> "$S/conflicted"',
        '  grep -vE "^(<<<<<<< |=======|>>>>>>> )" shared.txt > /tmp/merged && cat /tmp/merged > shared.txt',
        '  git add shared.txt && GIT_EDITOR=true git rebase --continue >/dev/null || exit 1',
        '  ;;',
        'esac',
        'exit 0',
        '',
      ].join('\n'),
    )
    chmodSync(agent, 0o755)
    const r = await runCli(['run', '--sandbox', '--workers', '2', '--no-auto-review', '--no-auto-align'], {cwd: root, env, timeoutMs: 200_000})
    const all = r.stdout + r.stderr
    if (process.env.HELIX_TEST_SHOW) process.stdout.write(all)
    expect(r.code, all).toBe(0)
    const calls = readFileSync(path.join(state, 'calls'), 'utf8').trim().split('\n').map((l) => l.split(' '))
    // each bead implemented once; exactly one resolve, run in its attempt's private clone
    for (const id of IDS) expect(calls.filter(([a, b]) => a === 'implementation' && b === id), all).toHaveLength(1)
    const resolves = calls.filter(([a]) => a === 'resolve')
    expect(resolves, all).toHaveLength(1)
    const [, rid, cwd] = resolves[0]
    expect(rid).toBe('rv-b')
    expect(cwd).toBe(path.join(root, '.helix', 'sandbox', `${rid}-1`))
    expect(readFileSync(path.join(state, 'conflicted'), 'utf8').trim()).toBe('shared.txt')
    // confined: the write to the project root failed, and nothing was written there
    expect(readFileSync(path.join(state, 'acts'), 'utf8').trim()).toBe('root write fail')
    expect(existsSync(path.join(root, 'evil-from-resolve.txt'))).toBe(false)
    expect(all).toMatch(new RegExp(`cycle \\d+: ${rid} CONFLICT in 1 file\\(s\\) → resolve \\(`))
    expect(all).toMatch(/cycle \d+: resolved, landed rv-[ab] \(\d+ commits?, [0-9a-f]{12}\)/)
    // both lines on the base, no marker; both beads closed
    const shared = g(root, 'show', 'main:shared.txt')
    expect(shared).not.toMatch(MARKER)
    expect(shared.split('\n').sort()).toEqual(['line by rv-a', 'line by rv-b'])
    const beads = readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {id: string; status: string})
    expect(beads.map((b) => `${b.id} ${b.status}`)).toEqual(['rv-a closed', 'rv-b closed'])
    // nothing of helix's left: no clone, no worktree, no attempt branch
    expect(readdirSync(path.join(root, '.helix', 'sandbox'))).toEqual([])
    expect(g(root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)
    expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
  }, 240_000)

  it('a red land check: the resolve reads the check log inside the sandbox, fixes the work in its clone, and it lands', async () => {
    const {root, state, agent, env} = project(['rc-1'])
    writeFileSync(
      agent,
      [
        '#!/bin/sh',
        `S=${q(state)}`,
        'if [ "$HELIX_ACTION" = check ]; then echo "NEXT_ACTION: STOP"; exit 0; fi',
        'prompt=$(cat)',
        'echo "$HELIX_ACTION $HELIX_BEAD_ID $(pwd)" >> "$S/calls"',
        'case "$HELIX_ACTION" in',
        'implementation)',
        '  echo bad > shared.txt',
        '  git commit -q -am "work on $HELIX_BEAD_ID" || exit 1',
        '  helix tracker close "$HELIX_BEAD_ID" || exit 1',
        '  ;;',
        'resolve)',
        // the prompt names the check's log (helix's worktree, read-only inside the sandbox)
        '  log=$(printf "%s\\n" "$prompt" | sed -n "s/^Its full output is in \\(.*\\) (not a tracked file)\\.$/\\1/p")',
        '  cat "$log" >> "$S/log-read" 2>/dev/null || echo "log unreadable" >> "$S/log-read"',
        '  ( echo evil >> "$log" ) 2>/dev/null && echo "log write ok" >> "$S/acts" || echo "log write fail" >> "$S/acts"',
        '  grep -qx bad shared.txt || exit 1',
        '  echo good > shared.txt',
        '  git commit -q -am "fix the check" || exit 1',
        '  ;;',
        'esac',
        'exit 0',
        '',
      ].join('\n'),
    )
    chmodSync(agent, 0o755)
    const check = 'echo "checking $HELIX_BEAD_ID"; if grep -qx bad shared.txt; then echo "shared.txt says bad"; exit 1; fi'
    const r = await runCli(['run', '--sandbox', '--land-check', check, '--no-auto-review', '--no-auto-align'], {cwd: root, env, timeoutMs: 200_000})
    const all = r.stdout + r.stderr
    if (process.env.HELIX_TEST_SHOW) process.stdout.write(all)
    expect(r.code, all).toBe(0)
    const calls = readFileSync(path.join(state, 'calls'), 'utf8').trim().split('\n').map((l) => l.split(' '))
    expect(calls.map(([a]) => a), all).toEqual(['implementation', 'resolve'])
    // one worker with --sandbox still has a workspace per attempt: the check applies, and no line says otherwise
    expect(all).not.toMatch(/--land-check applies to worktree attempts/)
    expect(calls[1][2]).toBe(path.join(root, '.helix', 'sandbox', 'rc-1-1'))
    // the log was readable inside, not writable
    expect(readFileSync(path.join(state, 'log-read'), 'utf8')).toContain('shared.txt says bad')
    expect(readFileSync(path.join(state, 'acts'), 'utf8').trim()).toBe('log write fail')
    expect(all).toMatch(/cycle \d+: rc-1 land check FAILED \(rc=1, \d+s\): shared\.txt says bad/)
    expect(all).toMatch(/cycle \d+: rc-1 land check failed → resolve \(/)
    expect(all).toMatch(/cycle \d+: resolved, landed rc-1 \(2 commits, [0-9a-f]{12}\)/)
    // the red candidate never reached the base; the fix did
    expect(g(root, 'show', 'main:shared.txt')).toBe('good')
    expect(g(root, 'log', '--format=%s', 'main').split('\n').slice(0, 2)).toEqual(['fix the check', 'work on rc-1'])
    expect(readdirSync(path.join(root, '.helix', 'sandbox'))).toEqual([])
    expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
  }, 240_000)
})
