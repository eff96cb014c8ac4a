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

// Part 3 of 3: 13.5 hostile payloads in text output, and 13.1 parallel_run_denied_count.

describe('13.5 hostile payloads in tracker text output', () => {
  const payloads = ['\u001b]0;pwned\u0007', '\u001b[2J', 'a\rb', 'n\u0000ul', 'rt\u202elo', 'two\nlines']
  const ESCAPES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

  it('ready, list, show, blocked, dep tree, create, close, doctor and the malformed-line error print them sanitized', () => {
    // argv cannot carry NUL: the id has every payload but that one
    const id = `hx-${payloads.filter((x) => !x.includes('\u0000')).join('')}`
    const bead = {id, title: payloads.join('|'), notes: payloads.join('|'), status: 'open', 'claim-token': 'k'}
    const dep = {id: 'hx-dep', title: payloads.join('|'), dependencies: [{issue_id: 'hx-dep', depends_on_id: id, type: 'blocks'}]}
    const {root, paths} = tempProject(JSON.stringify(bead) + '\n' + JSON.stringify(dep) + '\n')
    const outs: Array<[string, string]> = []
    for (const args of [['tracker', 'ready'], ['tracker', 'list'], ['tracker', 'show', id], ['tracker', 'blocked'], ['tracker', 'dep', 'tree', 'hx-dep'], ['tracker', 'doctor']]) {
      const r = helix(root, args)
      outs.push([args.join(' '), r.stdout + r.stderr])
    }
    const created = helix(root, ['tracker', 'create', payloads.filter((x) => !x.includes('\u0000')).join('|'), '--json'])
    expect(created.code).toBe(0)
    // the new id is printed alone on stdout; show it in text form too
    const shownNew = helix(root, ['tracker', 'show', JSON.parse(created.stdout).id])
    outs.push(['show new', shownNew.stdout + shownNew.stderr])
    const closed = helix(root, ['tracker', 'close', id], {HELIX_CLAIM_TOKEN: 'other'})
    expect(closed.code).toBe(3)
    outs.push(['close', closed.stderr])
    for (const [what, text] of outs) {
      for (const line of text.split('\n')) expect(line, what).not.toMatch(ESCAPES)
    }
    expect(outs[0][1]).toContain('hx-?]0;pwned??[2Ja?brt?lotwo⏎lines')
    expect(outs[0][1]).toContain('n?ul')
    expect(closed.stderr).toBe('helix: claim on hx-?]0;pwned??[2Ja?brt?lotwo⏎lines was lost (token mismatch); not changing it\n')
    // a malformed line quoting the payload
    writeFileSync(paths.file, `{"id":"x"}\n{"id": "${payloads.join('')}\n`)
    const bad = helix(root, ['tracker', 'ready'])
    expect(bad.code).toBe(1)
    expect(bad.stderr.split('\n').filter(Boolean)).toHaveLength(1)
    expect(bad.stderr).not.toMatch(ESCAPES)
    expect(bad.stderr).toMatch(/^helix: .*beads\.jsonl:2: malformed bead \(/)
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
