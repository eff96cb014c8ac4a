import {readFileSync, rmSync} from 'node:fs'
import {afterEach, describe, expect, it} from 'vitest'
import {recoverOrphans} from '../../src/recovery/orphans.js'
import {readTracker} from '../../src/tracker/store.js'
import {fakeProbe, sha, tempProject as makeProject} from '../tracker/helpers.js'

// every test removes its temp project. These tests are about the tracker side
// (killDeadRuns: false): the process side has its own file, dead-runs.test.ts
const made: string[] = []
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, {recursive: true, force: true})
})
function tempProject(body?: string): ReturnType<typeof makeProject> {
  const p = makeProject(body)
  made.push(p.root)
  return p
}

const NOW = new Date('2026-06-01T12:00:00Z')
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString()

function tracker(): string {
  const rows = [
    {id: 'a-stale', status: 'in_progress', owner: 'helix', 'claimed-at': ago(8000), 'claimed-pid': '111', 'claimed-machine': 'here', 'claim-token': 't'},
    {id: 'b-live', status: 'in_progress', owner: 'helix', 'claimed-at': ago(8000), 'claimed-pid': 222, 'claimed-start': 'S', 'claimed-machine': 'here'},
    {id: 'c-reused', status: 'in_progress', owner: 'helix', 'claimed-at': ago(8000), 'claimed-pid': 333, 'claimed-start': 'OLD', 'claimed-machine': 'here'},
    {id: 'd-fresh', status: 'in_progress', owner: 'helix', 'claimed-at': ago(60), 'claimed-pid': 444, 'claimed-machine': 'here'},
    {id: 'e-other-owner', status: 'in_progress', owner: 'alice', 'claimed-at': ago(8000), 'claimed-pid': 555},
    {id: 'f-other-host', status: 'in_progress', owner: 'helix', 'claimed-at': ago(8000), 'claimed-pid': 222, 'claimed-machine': 'far'},
    {id: 'g-no-time', status: 'in_progress', owner: 'helix', 'claimed-pid': 666},
    {id: 'h-open', status: 'open', owner: 'helix', 'claimed-at': ago(8000)},
  ]
  return rows.map((r) => JSON.stringify(r)).join('\n') + '\n'
}

describe('orphan recovery matrix', () => {
  it('reclaims stale, reused-pid and other-host claims; skips live, fresh, other owner, no time', async () => {
    const {paths} = tempProject(tracker())
    const lines: string[] = []
    const probe = fakeProbe({host: 'here', running: {222: 'S', 333: 'NEW'}})
    const r = await recoverOrphans(paths, {killDeadRuns: false, owner: 'helix', probe, now: NOW, thresholdSec: 7200, say: (l) => lines.push(l)})
    expect(r.recovered.sort()).toEqual(['a-stale', 'c-reused', 'f-other-host'])
    expect(r.skipped).toEqual([
      {id: 'b-live', why: 'claimed by PID 222 which is still alive, skipping'},
      {id: 'd-fresh', why: 'claimed 60s ago (threshold 7200s), too fresh to reclaim'},
      {id: 'g-no-time', why: 'claim has no recorded time (claimed-at/updated_at), too fresh to reclaim'},
    ])
    expect(lines).toContain('helix: reclaiming orphaned a-stale (age=8000s, pid=111 dead)')
    expect(lines).toContain('helix: b-live claimed by PID 222 which is still alive, skipping')
    expect(lines.at(-1)).toBe('helix: recovered 3 orphaned issue(s)')
    const snap = await readTracker(paths.file)
    const a = snap.byId.get('a-stale')!
    expect(a).toEqual({id: 'a-stale', status: 'open', updated_at: NOW.toISOString()})
    expect(snap.byId.get('e-other-owner')!.status).toBe('in_progress')
    expect(snap.byId.get('b-live')!.status).toBe('in_progress')
  })

  it("a live run's own claims on this host are neither reclaimed nor reported (its beads in flight are not orphans)", async () => {
    const {paths} = tempProject(tracker())
    const lines: string[] = []
    const probe = fakeProbe({host: 'here', running: {222: 'S', 333: 'NEW'}})
    // run 444 (d-fresh's claimer) asks: its own bead is silent; 222 on another host (f-other-host) is still reclaimed
    const r = await recoverOrphans(paths, {killDeadRuns: false, owner: 'helix', probe, now: NOW, thresholdSec: 7200, say: (l) => lines.push(l), ownPid: 444})
    expect(lines.some((l) => l.includes('d-fresh'))).toBe(false)
    expect(r.skipped.map((s) => s.id)).toEqual(['b-live', 'g-no-time'])
    // the same pid on another host is not this run: run 222 here still reclaims f-other-host (pid 222 on 'far')
    const again = tempProject(tracker())
    const other = await recoverOrphans(again.paths, {killDeadRuns: false, owner: 'helix', probe, now: NOW, thresholdSec: 7200, say: () => {}, ownPid: 222})
    expect(other.recovered).toContain('f-other-host')
    expect(other.skipped.map((s) => s.id)).not.toContain('b-live')
  })

  it('dry run changes nothing', async () => {
    const {paths} = tempProject(tracker())
    const h = sha(paths.file)
    const lines: string[] = []
    const r = await recoverOrphans(paths, {killDeadRuns: false, owner: 'helix', probe: fakeProbe({host: 'here'}), now: NOW, thresholdSec: 7200, dryRun: true, say: (l) => lines.push(l)})
    expect(r.recovered).toContain('a-stale')
    expect(lines).toContain('helix: would reclaim orphaned a-stale (age=8000s, pid=111 dead)')
    expect(sha(paths.file)).toBe(h)
  })

  it('re-checks under the lock: a claim renewed between scan and write is kept', async () => {
    const {paths} = tempProject(tracker())
    let renewed = false
    const probe = fakeProbe({host: 'here'})
    const orig = probe.helixProcessNamesBead
    // When the scan probes a-stale, simulate another process renewing its claim.
    probe.helixProcessNamesBead = async (id: string) => {
      if (id === 'a-stale' && !renewed) {
        renewed = true
        const text = readFileSync(paths.file, 'utf8').replace(ago(8000), ago(5))
        const {writeFileSync} = await import('node:fs')
        writeFileSync(paths.file, text)
      }
      return orig(id)
    }
    const r = await recoverOrphans(paths, {killDeadRuns: false, owner: 'helix', probe, now: NOW, thresholdSec: 7200, say: () => {}})
    expect(r.recovered).not.toContain('a-stale')
    expect(r.skipped.find((s) => s.id === 'a-stale')?.why).toBe('claimed 5s ago (threshold 7200s), too fresh to reclaim')
    expect((await readTracker(paths.file)).byId.get('a-stale')!.status).toBe('in_progress')
  })
})
