/**
 * SPEC 13.1–13.3 in-process: the write protocol (lock + identity check before
 * the rename), stale lock rules, regular files only, symlinks kept, bytes kept,
 * doctor findings, the read cache, fencing and provably-dead claims.
 * Real temp directories and real files; no built CLI.
 */
import {execFileSync} from 'node:child_process'
import {chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {clearTrackerCache, inspectLock, LOCK_STALE_MS, mutateTracker, readTracker} from '../../src/tracker/store.js'
import {parseTracker, serializeTrackerBuffer} from '../../src/tracker/codec.js'
import {checkFence, claimBead, closeBead, createBead, depAdd, depRemove, reopenBead, updateBead, updateBeadDetailed} from '../../src/tracker/ops.js'
import {doctorTracker, doctorText} from '../../src/tracker/admin.js'
import {claimLiveness, staleClaimIds} from '../../src/tracker/liveness.js'
import {readyBeads} from '../../src/tracker/queries.js'
import {HelixError} from '../../src/util/errors.js'
import {fakeProbe, tempProject} from './helpers.js'
import {waitFor} from '../support/wait.js'

async function err(p: Promise<unknown>): Promise<HelixError> {
  const e = await p.then(() => undefined, (x) => x)
  expect(e).toBeInstanceOf(HelixError)
  return e as HelixError
}

describe('13.1 no lost write', () => {
  it('a file changed under the lock is never overwritten: the mutation is redone on the new file', async () => {
    const {paths} = tempProject('{"id":"a","title":"A"}\n{"id":"b","title":"B"}\n')
    let calls = 0
    await mutateTracker(paths, (snap) => {
      calls++
      // the first time, another (lock-ignoring) writer replaces the file meanwhile
      if (calls === 1) writeFileSync(paths.file, '{"id":"a","title":"A"}\n{"id":"b","title":"B-other"}\n')
      snap.byId.get('a')!.title = 'A-mine'
      return {beads: snap.beads, result: null}
    })
    expect(calls).toBe(2)
    expect(readFileSync(paths.file, 'utf8')).toBe('{"id":"a","title":"A-mine"}\n{"id":"b","title":"B-other"}\n')
    expect(readdirSync(paths.dir).filter((f) => f.includes('.tmp-'))).toEqual([])
  })

  it('after 1 + 3 attempts that all lose, exit 2 and nothing written', async () => {
    const {paths} = tempProject('{"id":"a"}\n')
    let calls = 0
    const e = await err(
      mutateTracker(paths, (snap) => {
        calls++
        writeFileSync(paths.file, `{"id":"a","n":${calls}}\n`)
        snap.byId.get('a')!.title = 'mine'
        return {beads: snap.beads, result: null}
      }),
    )
    expect([e.exitCode, e.message]).toEqual([2, 'tracker changed under a held lock; nothing written (retry)'])
    expect(calls).toBe(4)
    expect(readFileSync(paths.file, 'utf8')).toBe('{"id":"a","n":4}\n')
    expect(readdirSync(paths.dir).filter((f) => f.includes('.tmp-'))).toEqual([])
  })

  it('stale window is 10 s; a lock from the future is broken; a fresh one is waited on', async () => {
    expect(LOCK_STALE_MS).toBeGreaterThanOrEqual(10_000)
    const {paths} = tempProject('{"id":"a"}\n')
    mkdirSync(paths.lockDir)
    const future = new Date(Date.now() + 3600_000)
    utimesSync(paths.lockDir, future, future)
    expect(await inspectLock(paths.lockDir)).toMatchObject({owner: 'helix', future: true, stale: true})
    await mutateTracker(paths, (s) => ({beads: s.beads, result: null}), {timeoutSec: 1})
    expect(existsSync(paths.lockDir)).toBe(false)
    // a fresh helix lock (within the window) is not broken
    mkdirSync(paths.lockDir)
    expect((await err(mutateTracker(paths, (s) => ({beads: s.beads, result: null}), {timeoutSec: 0.3}))).exitCode).toBe(2)
    expect(existsSync(paths.lockDir)).toBe(true)
  })

  it('a DDx lock with an empty or junk pid is stale once older than the window, not before', async () => {
    for (const pid of ['', 'garbage']) {
      const {paths} = tempProject('{"id":"a"}\n')
      mkdirSync(paths.lockDir)
      writeFileSync(path.join(paths.lockDir, 'pid'), pid)
      expect((await inspectLock(paths.lockDir))!.stale).toBe(false)
      expect((await err(mutateTracker(paths, (s) => ({beads: s.beads, result: null}), {timeoutSec: 0.3}))).exitCode).toBe(2)
      const old = new Date(Date.now() - LOCK_STALE_MS - 5000)
      utimesSync(paths.lockDir, old, old)
      const info = (await inspectLock(paths.lockDir))!
      expect(info).toMatchObject({owner: 'ddx', stale: true, ddx_pid: null})
      await mutateTracker(paths, (s) => ({beads: s.beads, result: null}), {timeoutSec: 2})
      expect(existsSync(paths.lockDir)).toBe(false)
    }
  })

  it('old temp files of killed writers are removed by the next writer; fresh ones are kept', async () => {
    const {paths} = tempProject('{"id":"a"}\n')
    const oldTmp = path.join(paths.dir, '.beads.jsonl.tmp-1-old')
    const freshTmp = path.join(paths.dir, '.beads.jsonl.tmp-2-fresh')
    const oldPid = path.join(paths.dir, 'helix.pid.3-x.tmp')
    for (const f of [oldTmp, freshTmp, oldPid]) writeFileSync(f, 'partial')
    const old = new Date(Date.now() - 11 * 60_000)
    utimesSync(oldTmp, old, old)
    utimesSync(oldPid, old, old)
    await mutateTracker(paths, (s) => ({beads: s.beads, result: null}))
    expect([existsSync(oldTmp), existsSync(freshTmp), existsSync(oldPid)]).toEqual([false, true, false])
    // and by tracker doctor --repair
    writeFileSync(oldTmp, 'partial')
    utimesSync(oldTmp, old, old)
    const r = await doctorTracker(paths, {probe: fakeProbe(), thresholdSec: 7200, repair: true})
    expect(r.removed_temp_files).toEqual([oldTmp])
    expect([existsSync(oldTmp), existsSync(freshTmp)]).toEqual([false, true])
  })
})

describe('13.2 the file stays what it was', () => {
  it('FIFO, /dev/zero symlink, directory, socket: refused at once with exit 1, for reads and writes', async () => {
    const cases: Array<[string, (file: string) => void]> = [
      ['fifo', (f) => execFileSync('mkfifo', [f])],
      ['dev-zero', (f) => symlinkSync('/dev/zero', f)],
      ['dir', (f) => mkdirSync(f)],
    ]
    for (const [, make] of cases) {
      const {paths} = tempProject()
      make(paths.file)
      const t0 = Date.now()
      const e1 = await err(readTracker(paths.file))
      expect([e1.exitCode, e1.message]).toEqual([1, `${paths.file} is not a regular file`])
      const e2 = await err(mutateTracker(paths, (s) => ({beads: s.beads, result: null})))
      expect(e2.message).toBe(`${paths.file} is not a regular file`)
      expect(Date.now() - t0).toBeLessThan(1000)
    }
  })

  it('a symlinked tracker stays a symlink; its target keeps its mode', async () => {
    const {root, paths} = tempProject()
    const real = path.join(root, 'elsewhere', 'beads.jsonl')
    mkdirSync(path.dirname(real))
    writeFileSync(real, '{"id":"a","title":"A"}\n')
    chmodSync(real, 0o600)
    symlinkSync(real, paths.file)
    const created = await createBead(paths, {title: 'new one', hook: false}, {})
    await claimBead(paths, 'a', {probe: fakeProbe(), thresholdSec: 7200})
    await updateBead(paths, 'a', {title: 'A2'})
    await closeBead(paths, 'a')
    expect(lstatSync(paths.file).isSymbolicLink()).toBe(true)
    expect(statSync(real).mode & 0o777).toBe(0o600)
    const [first, second] = readFileSync(real, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(first).toMatchObject({id: 'a', title: 'A2', status: 'closed'})
    expect(second).toMatchObject({id: created.id, title: 'new one'})
    expect(readdirSync(path.dirname(real)).filter((f) => f.includes('.tmp-'))).toEqual([])
  })

  it('round trip: invalid UTF-8, big ints, 1.0, 1e2, -0, escapes, odd key order — a mutation changes only its bead line, and there only interpreted keys', async () => {
    const lines = [
      Buffer.concat([Buffer.from('{"title":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from(' bytes","id":"a"}')]),
      Buffer.from('{"id":"b",  "big":12345678901234567890, "f":1.0, "e":1e2, "z":-0, "s":"\\u00e9\\/x", "title":"B"}'),
      Buffer.from('{"status":"open","id":"c","n":1.50}'),
    ]
    const body = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]))
    const {paths} = tempProject(body)
    // a rewrite that changes nothing is byte-identical
    await mutateTracker(paths, (s) => ({beads: s.beads, result: null}))
    expect(readFileSync(paths.file).equals(body)).toBe(true)
    // the invalid-UTF-8 line is a valid bead
    expect((await readTracker(paths.file)).byId.get('a')!.id).toBe('a')
    await updateBead(paths, 'b', {title: 'B2', now: new Date('2026-06-01T00:00:00.000Z')})
    const after = readFileSync(paths.file)
    const out = after.toString('latin1').split('\n')
    expect(Buffer.from(out[0], 'latin1').equals(lines[0])).toBe(true)
    expect(Buffer.from(out[2], 'latin1').equals(lines[2])).toBe(true)
    expect(out[1]).toBe('{"big":12345678901234567890,"e":1e2,"f":1.0,"id":"b","s":"\\u00e9\\/x","title":"B2","updated_at":"2026-06-01T00:00:00.000Z","z":-0}')
    // doctor --repair moves a malformed line aside byte for byte
    const bad = Buffer.concat([Buffer.from('{"id": broken '), Buffer.from([0xc3, 0x28]), Buffer.from(' line')])
    writeFileSync(paths.file, Buffer.concat([after, bad, Buffer.from('\n')]))
    const r = await doctorTracker(paths, {probe: fakeProbe(), thresholdSec: 7200, repair: true})
    expect(readFileSync(r.repaired!.rejected_file!).equals(Buffer.concat([bad, Buffer.from('\n')]))).toBe(true)
    expect(readFileSync(paths.file).equals(after)).toBe(true)
  })

  it('doctor reports duplicate keys, invalid UTF-8, future timestamps and the lock (age, owner, stale)', async () => {
    const body = Buffer.concat([
      Buffer.from('{"id":"a","title":"x","title":"y"}\n'),
      Buffer.concat([Buffer.from('{"id":"b","title":"'), Buffer.from([0xff]), Buffer.from('"}\n')]),
      Buffer.from('{"claimed-at":"2099-01-01T00:00:00Z","id":"c","owner":"helix","status":"in_progress"}\n'),
    ])
    const {paths} = tempProject(body)
    mkdirSync(paths.lockDir)
    writeFileSync(path.join(paths.lockDir, 'pid'), '999999999\n')
    const old = new Date(Date.now() - 60_000)
    utimesSync(paths.lockDir, old, old)
    const r = await doctorTracker(paths, {probe: fakeProbe(), thresholdSec: 7200})
    expect(r.ok).toBe(false)
    expect(r.duplicate_keys).toEqual([{line: 1, keys: ['title']}])
    expect(r.invalid_utf8_lines).toEqual([2])
    expect(r.future_timestamps).toEqual([{id: 'c', key: 'claimed-at', value: '2099-01-01T00:00:00Z'}])
    expect(r.lock).toMatchObject({owner: 'ddx', stale: true, ddx_pid: 999999999})
    expect(r.other_locks).toEqual([])
    mkdirSync(path.join(paths.dir, 'run-state.lock'))
    const r2 = await doctorTracker(paths, {probe: fakeProbe(), thresholdSec: 7200})
    expect(r2.other_locks).toMatchObject([{owner: 'helix', stale: false}])
    expect(doctorText(r2)).toMatch(/lock .*run-state\.lock: helix writer, \d+s old, not stale/)
    const text = doctorText(r)
    expect(text).toContain('line 1: duplicate key(s) title')
    expect(text).toContain('line 2: invalid UTF-8')
    expect(text).toContain('c: claimed-at 2099-01-01T00:00:00Z is in the future (no evidence of age)')
    expect(text).toMatch(/lock .*beads\.lock: DDx writer pid 999999999, 6\ds old, stale \(DDx writer pid 999999999 is not running\)/)
    // the future claimed-at is no evidence: a claim with no other date is young, never reclaimed on it
    expect((await claimLiveness(parseTracker(body, 'x').byId.get('c')!, fakeProbe(), new Date(), 7200)).live).toBe(true)
  })
})

describe('read cache (issue 11)', () => {
  it('an unchanged file is not parsed again; any change (even same size) is seen; a write is seen at once', async () => {
    clearTrackerCache()
    const {paths} = tempProject('{"id":"a","title":"A"}\n')
    const s1 = await readTracker(paths.file)
    expect(await readTracker(paths.file)).toBe(s1)
    writeFileSync(paths.file, '{"id":"a","title":"B"}\n') // same size, new mtime
    const s2 = await readTracker(paths.file)
    expect(s2).not.toBe(s1)
    expect(s2.byId.get('a')!.title).toBe('B')
    await updateBead(paths, 'a', {title: 'C'})
    expect((await readTracker(paths.file)).byId.get('a')!.title).toBe('C')
    expect((await readTracker(paths.file)).byId.get('a')!.updated_at).toBeTypeOf('string')
  })
})

describe('13.3 fencing matrix', () => {
  const body = [
    '{"claim-token":"T1","id":"mine","owner":"helix","status":"in_progress"}',
    '{"claim-token":"T2","id":"theirs","owner":"helix","status":"in_progress"}',
    '{"id":"released","status":"open"}',
    '{"id":"side","status":"open"}',
    '{"id":"dep","status":"closed"}',
  ].join('\n') + '\n'
  type Op = (p: ReturnType<typeof tempProject>['paths'], id: string, f: {claimToken?: string; targetId?: string}) => Promise<unknown>
  const ops: Record<string, Op> = {
    close: (p, id, f) => closeBead(p, id, f),
    reopen: (p, id, f) => reopenBead(p, id, 'r', f),
    'update --title': (p, id, f) => updateBead(p, id, {title: 't', ...f}),
    'update --unclaim': (p, id, f) => updateBead(p, id, {unclaim: true, ...f}),
    'dep add': (p, id, f) => depAdd(p, id, 'dep', f),
    'dep remove': async (p, id, f) => {
      await depAdd(p, id, 'dep')
      return depRemove(p, id, 'dep', f)
    },
  }
  // [bead, HELIX_BEAD_ID, fenced?]
  const cases: Array<[string, string, boolean]> = [
    ['mine', 'mine', false], // own token
    ['theirs', 'mine', true], // another claim's token
    ['released', 'released', true], // own bead whose claim was released
    ['side', 'mine', false], // an unclaimed sibling
  ]
  for (const [name, op] of Object.entries(ops)) {
    it(`${name}: refuses exactly the fenced cases with exit 3, file untouched`, async () => {
      for (const [id, target, fenced] of cases) {
        const {paths} = tempProject(body)
        const before = readFileSync(paths.file)
        const f = {claimToken: 'T1', targetId: target}
        if (fenced) {
          const e = await err(op(paths, id, f))
          expect([e.exitCode, e.message]).toEqual([3, `claim on ${id} was lost (token mismatch); not changing it`])
          if (name !== 'dep remove') expect(readFileSync(paths.file).equals(before)).toBe(true)
        } else {
          const r = await op(paths, id, f).then(() => 'ok', (x: HelixError) => x.exitCode)
          expect(r === 'ok' || r === 1).toBe(true) // allowed through the fence (may fail its own rule, never exit 3)
        }
        // without HELIX_CLAIM_TOKEN nothing is fenced
        expect(() => checkFence({id, 'claim-token': 'zz'}, {targetId: target})).not.toThrow()
      }
    })
  }

  it('--unclaim of a closed bead is a result, not an error', async () => {
    const {paths} = tempProject('{"id":"c","status":"closed"}\n')
    const before = readFileSync(paths.file)
    expect(await updateBeadDetailed(paths, 'c', {unclaim: true})).toMatchObject({notice: 'c is closed; leaving it closed'})
    expect(readFileSync(paths.file).equals(before)).toBe(true)
  })
})

describe('13.3 claims', () => {
  const now = new Date('2026-06-01T12:00:00.000Z')
  const claimed = (extra: Record<string, unknown>) =>
    ({id: 'x', status: 'in_progress', owner: 'helix', 'claimed-at': '2026-06-01T11:59:00.000Z', 'claimed-machine': 'here', 'claimed-pid': 4242, 'claimed-start': 'S1', 'claim-token': 'TOK', ...extra}) as const

  it('a provably dead claimer (this host, start token, pid gone or reused, no dispatch alive) is stale at once', async () => {
    const dead = await claimLiveness({...claimed({})}, fakeProbe({host: 'here'}), now, 7200)
    expect(dead).toMatchObject({live: false, reason: 'stale'})
    const reused = await claimLiveness({...claimed({})}, fakeProbe({host: 'here', running: {4242: 'S9'}}), now, 7200)
    expect(reused.live).toBe(false)
    // still live: the pid runs with its token; a dispatch of the claim is alive; helix names the bead; other host; no start token
    expect((await claimLiveness({...claimed({})}, fakeProbe({host: 'here', running: {4242: 'S1'}}), now, 7200)).live).toBe(true)
    expect((await claimLiveness({...claimed({})}, fakeProbe({host: 'here', dispatches: ['TOK']}), now, 7200)).live).toBe(true)
    expect((await claimLiveness({...claimed({})}, fakeProbe({host: 'here', helixNames: ['x']}), now, 7200)).live).toBe(true)
    expect((await claimLiveness({...claimed({'claimed-machine': 'elsewhere'})}, fakeProbe({host: 'here'}), now, 7200)).live).toBe(true)
    expect((await claimLiveness({...claimed({'claimed-start': undefined})}, fakeProbe({host: 'here'}), now, 7200)).live).toBe(true)
  })

  it('real processes: a live process carrying a dispatch id of the claim keeps it live; once it is gone the claim is stale at once', async () => {
    const {spawn} = await import('node:child_process')
    const {hostname} = await import('node:os')
    const {realProbe} = await import('../../src/proc/process-probe.js')
    const token = `tok${process.pid}${Date.now()}`
    const agent = spawn('sleep', ['30'], {stdio: 'ignore', env: {...process.env, HELIX_DISPATCH_ID: `${token}.1`}})
    try {
      // the claimer (pid 999999999) is gone: only the tagged agent process is left
      // (a unique id: the ps-list clause looks for helix processes naming the bead)
      const b = {...claimed({id: `hx-${token}`, 'claimed-machine': hostname(), 'claimed-pid': 999_999_999, 'claim-token': token})}
      // the child's environ is readable once it has exec'd
      await waitFor(async () => (await claimLiveness(b, realProbe(), now, 7200)).live, {timeoutMs: 5000, what: 'the tagged agent to count as live'})
      agent.kill('SIGKILL')
      await new Promise((r) => agent.once('exit', r))
      const snap = parseTracker(JSON.stringify(b) + '\n', 'x')
      expect([...(await staleClaimIds(snap, realProbe(), now, 7200))]).toEqual([b.id])
    } finally {
      agent.kill('SIGKILL')
    }
  })

  it('a claimed-at far in the future falls back to updated_at', async () => {
    const b = {...claimed({'claimed-at': '2099-01-01T00:00:00Z', 'claimed-start': undefined, updated_at: '2026-05-01T00:00:00.000Z'})}
    const l = await claimLiveness(b, fakeProbe({host: 'here'}), now, 7200)
    expect(l).toMatchObject({live: false, ageSeconds: 31 * 86400 + 12 * 3600})
  })

  it("another owner's stale claim is never ready for helix (run/next) nor claimable, but tracker ready lists it", async () => {
    const {paths} = tempProject(JSON.stringify(claimed({owner: 'alice'})) + '\n')
    const snap = await readTracker(paths.file)
    const stale = await staleClaimIds(snap, fakeProbe({host: 'here'}), now, 7200)
    expect([...stale]).toEqual(['x'])
    expect(readyBeads(snap, {staleClaims: stale, owner: 'helix'})).toEqual([])
    expect(readyBeads(snap, {staleClaims: stale, owner: null}).map((b) => b.id)).toEqual(['x'])
    const e = await err(claimBead(paths, 'x', {probe: fakeProbe({host: 'here'}), thresholdSec: 7200, now}))
    expect([e.exitCode, e.message]).toEqual([3, 'cannot claim x: already claimed by alice (pid 4242)'])
    // helix's own provably-dead claim is taken at once
    const {paths: p2} = tempProject(JSON.stringify(claimed({})) + '\n')
    const b = await claimBead(p2, 'x', {probe: fakeProbe({host: 'here'}), thresholdSec: 7200, now, pid: 777})
    expect(b['claimed-pid']).toBe(777)
  })
})

describe('serializer keeps unchanged lines as bytes', () => {
  it('serializeTrackerBuffer of a parse is the input, whatever its spacing', () => {
    const body = Buffer.from('{"id":"a" , "x" : [1, 2]}\n{"b":1,"id":"b"}\n')
    expect(serializeTrackerBuffer(parseTracker(body, 'f').beads).equals(body)).toBe(true)
  })
})
