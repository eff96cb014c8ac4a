/**
 * SPEC 13 and issue 9.2 through the commands, in-process (test/support/in-process.ts): what
 * they read, refuse and print, without a node start each. What needs the process stays in
 * the integrity-*.e2e files: a FIFO or /dev/zero tracker (a blocking read would hang this
 * worker, not fail a test), `run` beside a decoy pid file, the fast path's show and close,
 * eight runs racing for the lock.
 */
import {spawn} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {pidAlive} from '../../src/state/pidfile.js'
import {helixInProcess as helix} from '../support/in-process.js'
import {git} from '../support/git.js'
import {trackProcess} from '../support/tmp.js'
import {tempProject, stubEnv} from './helpers.js'

describe('13.2 a tracker that is a directory (in-process)', () => {
  // FIFO and /dev/zero: integrity-files.e2e.test.ts (there a read that blocks is a timeout)
  it('every command but run exits 1 naming the file', async () => {
    const env = stubEnv()
    const {root, paths} = tempProject()
    git(root, 'init', '-q')
    mkdirSync(paths.file)
    for (const args of [['status'], ['next'], ['tracker', 'ready'], ['tracker', 'create', 'x'], ['tracker', 'doctor'], ['doctor'], ['check', '--agent', 'codex']]) {
      const r = await helix(root, args, env)
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stdout + r.stderr, args.join(' ')).toContain(`${paths.file} is not a regular file`)
    }
  })
})

describe('decoy pid file (issue 9.2, in-process)', () => {
  for (const start of ['garbage', '', '2099-01-01T00:00:00.000Z']) {
    it(`start field '${start}': stop and status never signal the named process`, async () => {
      const decoy = spawn('sleep', ['3333'], {stdio: 'ignore'})
      trackProcess(decoy)
      const {root, paths} = tempProject('{"id":"hx-a","status":"closed","title":"done"}\n')
      writeFileSync(paths.pidFile, `${decoy.pid} ${start}\n`)
      expect((await helix(root, ['stop'])).code).toBe(1)
      expect(pidAlive(decoy.pid!)).toBe(true)
      writeFileSync(paths.pidFile, `${decoy.pid} ${start}\n`)
      await helix(root, ['status'])
      await new Promise((r) => setTimeout(r, 100)) // a signal sent would have been delivered by now
      expect(pidAlive(decoy.pid!)).toBe(true)
    })
  }
})

describe('ids that begin with - (after --, in-process)', () => {
  it('show, update, close, reopen, dep add/remove address them', async () => {
    const {root, paths} = tempProject('{"id":"-x","title":"dash"}\n{"id":"-y","status":"closed","title":"y"}\n')
    expect((await helix(root, ['tracker', 'show', '--', '-x'])).stdout).toContain('[open] -x (task) — dash')
    expect((await helix(root, ['tracker', 'update', '--title', 'renamed', '--', '-x'])).code).toBe(0)
    expect((await helix(root, ['tracker', 'dep', 'add', '--', '-x', '-y'])).code).toBe(0)
    expect((await helix(root, ['tracker', 'dep', 'tree', '--', '-x'])).stdout).toContain('-y [closed] y')
    expect((await helix(root, ['tracker', 'dep', 'remove', '--', '-x', '-y'])).code).toBe(0)
    expect((await helix(root, ['tracker', 'close', '--', '-x'])).stdout).toBe('closed -x\n')
    expect((await helix(root, ['tracker', 'reopen', '--', '-x'])).stdout).toBe('reopened -x\n')
    expect(JSON.parse(readFileSync(paths.file, 'utf8').split('\n')[0])).toMatchObject({id: '-x', title: 'renamed', status: 'open'})
  })
})

describe('13.5 hostile payloads in tracker text output (in-process)', () => {
  const payloads = ['\u001b]0;pwned\u0007', '\u001b[2J', 'a\rb', 'n\u0000ul', 'rt\u202elo', 'two\nlines']
  const ESCAPES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

  it('ready, list, show, blocked, dep tree, create, close, doctor and the malformed-line error print them sanitized', async () => {
    // argv cannot carry NUL: the id has every payload but that one
    const id = `hx-${payloads.filter((x) => !x.includes('\u0000')).join('')}`
    const bead = {id, title: payloads.join('|'), notes: payloads.join('|'), status: 'open', 'claim-token': 'k'}
    const dep = {id: 'hx-dep', title: payloads.join('|'), dependencies: [{issue_id: 'hx-dep', depends_on_id: id, type: 'blocks'}]}
    const {root, paths} = tempProject(JSON.stringify(bead) + '\n' + JSON.stringify(dep) + '\n')
    const outs: Array<[string, string]> = []
    for (const args of [['tracker', 'ready'], ['tracker', 'list'], ['tracker', 'show', id], ['tracker', 'blocked'], ['tracker', 'dep', 'tree', 'hx-dep'], ['tracker', 'doctor']]) {
      const r = await helix(root, args)
      outs.push([args.join(' '), r.stdout + r.stderr])
    }
    const created = await helix(root, ['tracker', 'create', payloads.filter((x) => !x.includes('\u0000')).join('|'), '--json'])
    expect(created.code).toBe(0)
    // the new id is printed alone on stdout; show it in text form too
    const shownNew = await helix(root, ['tracker', 'show', JSON.parse(created.stdout).id])
    outs.push(['show new', shownNew.stdout + shownNew.stderr])
    const closed = await helix(root, ['tracker', 'close', id], {HELIX_CLAIM_TOKEN: 'other'})
    expect(closed.code).toBe(3)
    outs.push(['close', closed.stderr])
    for (const [what, text] of outs) {
      for (const line of text.split('\n')) expect(line, what).not.toMatch(ESCAPES)
    }
    expect(outs[0][1]).toContain('hx-?]0;pwned??[2Ja?brt?lotwo⏎lines')
    expect(outs[0][1]).toContain('n?ul')
    expect(outs[2][1]).toContain('[open] hx-?]0;pwned??[2Ja?brt?lotwo⏎lines (task) — ')
    expect(closed.stderr).toBe('helix: claim on hx-?]0;pwned??[2Ja?brt?lotwo⏎lines was lost (token mismatch); not changing it\n')
    // a malformed line quoting the payload
    writeFileSync(paths.file, `{"id":"x"}\n{"id": "${payloads.join('')}\n`)
    const bad = await helix(root, ['tracker', 'ready'])
    expect(bad.code).toBe(1)
    expect(bad.stderr.split('\n').filter(Boolean)).toHaveLength(1)
    expect(bad.stderr).not.toMatch(ESCAPES)
    expect(bad.stderr).toMatch(/^helix: .*beads\.jsonl:2: malformed bead \(/)
  })
})
