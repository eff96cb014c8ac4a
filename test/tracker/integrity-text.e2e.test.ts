/**
 * SPEC 13 through the built CLI (`npm run build` first): non-regular trackers,
 * decoy pid files, `--` ids, hostile payloads in text output and the run-state
 * denied count. The SIGSTOP torture is torture.stress.test.ts (a 3-trial smoke
 * in `npm test`, 20 trials in `npm run test:stress`).
 */
import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix, helixAsync, tempProject, stubEnv} from './helpers.js'

// Part 3 of 3: 13.5 hostile payloads through the fast path, and 13.1 parallel_run_denied_count.

describe('13.5 hostile payloads through the fast path', () => {
  // every command's text: integrity-cli.test.ts (in-process); here the two an agent runs on
  // every bead, which the built CLI answers without oclif (src/cli/fast-path.ts)
  const payloads = ['\u001b]0;pwned\u0007', '\u001b[2J', 'a\rb', 'n\u0000ul', 'rt\u202elo', 'two\nlines']
  const ESCAPES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

  it('show and close print them sanitized', () => {
    const id = `hx-${payloads.filter((x) => !x.includes('\u0000')).join('')}`
    const bead = {id, title: payloads.join('|'), notes: payloads.join('|'), status: 'open', 'claim-token': 'k'}
    const {root} = tempProject(JSON.stringify(bead) + '\n')
    const shown = helix(root, ['tracker', 'show', id])
    expect(shown.code).toBe(0)
    for (const line of shown.stdout.split('\n')) expect(line).not.toMatch(ESCAPES)
    expect(shown.stdout).toContain('[open] hx-?]0;pwned??[2Ja?brt?lotwo⏎lines (task) — ')
    expect(shown.stdout).toContain('n?ul')
    const closed = helix(root, ['tracker', 'close', id], {HELIX_CLAIM_TOKEN: 'other'})
    expect(closed.code).toBe(3)
    expect(closed.stderr).toBe('helix: claim on hx-?]0;pwned??[2Ja?brt?lotwo⏎lines was lost (token mismatch); not changing it\n')
  })
})

describe('13.1 parallel_run_denied_count under a lock', () => {
  it('8 runs started at once: 1 runs, 7 exit 2, the count is 7', async () => {
    const {root} = tempProject('{"id":"hx-a","status":"open","title":"slow one","priority":2,"issue_type":"task"}\n')
    spawnSync('git', ['init', '-q'], {cwd: root})
    spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init'], {cwd: root})
    const env = stubEnv()
    // the winner's agent holds the run until the 7 others have been turned away
    writeFileSync(path.join(env.HELIX_STUB_DIR, 'script.json'), JSON.stringify({implementation: {default: ['wait-file:release close']}, check: ['next:STOP']}))
    let denied = 0
    const runs = Array.from({length: 8}, () =>
      helixAsync(root, ['run', '--agent', 'codex', '--max-cycles', '1', '--review-every', '0'], env).then((r) => {
        if (r.code === 2 && ++denied === 7) writeFileSync(path.join(env.HELIX_STUB_DIR, 'release'), '')
        return r
      }),
    )
    const results = await Promise.all(runs)
    const codes = results.map((r) => r.code).sort()
    expect(codes.filter((c) => c === 2)).toHaveLength(7)
    expect(codes.filter((c) => c !== 2)).toHaveLength(1)
    const state = JSON.parse(readFileSync(path.join(root, '.ddx', 'run-state.json'), 'utf8'))
    expect(state.parallel_run_denied_count).toBe(7)
  }, 60_000)
})
