import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {describe, expect, it} from 'vitest'
import {claimLiveness, orphanThresholdSec, staleClaimIds} from '../../src/tracker/liveness.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {realProbe, currentStartToken, namesBead, pidRunning, startTokenOf} from '../../src/proc/process-probe.js'
import type {Bead} from '../../src/tracker/types.js'
import {fakeProbe} from './helpers.js'
import {trackProcess} from '../support/tmp.js'

const NOW = new Date('2026-06-01T12:00:00Z')
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString()

const claim = (extra: Partial<Bead>): Bead => ({id: 'hx-1', status: 'in_progress', owner: 'helix', 'claimed-machine': 'here', ...extra})

describe('claim liveness matrix', () => {
  it('fresh claims are live without any process lookup', async () => {
    const p = fakeProbe()
    const l = await claimLiveness(claim({'claimed-at': ago(60), 'claimed-pid': 99}), p, NOW, 7200)
    expect(l).toEqual({live: true, reason: 'fresh', ageSeconds: 60, pid: 99})
    expect(p.runCalls + p.psCalls).toBe(0)
  })

  it('old claim with a dead pid is stale', async () => {
    const l = await claimLiveness(claim({'claimed-at': ago(8000), 'claimed-pid': '1861155'}), fakeProbe(), NOW, 7200)
    expect(l).toEqual({live: false, reason: 'stale', ageSeconds: 8000, pid: 1861155})
  })

  it('old claim with its live pid (same start token) is live', async () => {
    const l = await claimLiveness(claim({'claimed-at': ago(8000), 'claimed-pid': 50, 'claimed-start': 'T1'}), fakeProbe({running: {50: 'T1'}}), NOW, 7200)
    expect(l.reason).toBe('pid-alive')
  })

  it('a reused pid (different start token) is not the claimer', async () => {
    const l = await claimLiveness(claim({'claimed-at': ago(8000), 'claimed-pid': 50, 'claimed-start': 'T1'}), fakeProbe({running: {50: 'T2'}}), NOW, 7200)
    expect(l.live).toBe(false)
  })

  it('a live pid without recorded start token counts as alive (older tools)', async () => {
    const l = await claimLiveness(claim({'claimed-at': ago(8000), 'claimed-pid': 50}), fakeProbe({running: {50: 'T2'}}), NOW, 7200)
    expect(l.reason).toBe('pid-alive')
  })

  it('a helix process naming the bead keeps the claim live', async () => {
    const l = await claimLiveness(claim({'claimed-at': ago(8000)}), fakeProbe({helixNames: ['hx-1']}), NOW, 7200)
    expect(l.reason).toBe('helix-process')
  })

  it('claims from another host: the pid is never evidence; only age decides', async () => {
    const p = fakeProbe({running: {50: undefined}, helixNames: ['hx-1']})
    const old = await claimLiveness(claim({'claimed-machine': 'elsewhere', 'claimed-at': ago(8000), 'claimed-pid': 50}), p, NOW, 7200)
    expect(old.live).toBe(false)
    const young = await claimLiveness(claim({'claimed-machine': 'elsewhere', 'claimed-at': ago(10), 'claimed-pid': 50}), p, NOW, 7200)
    expect(young.live).toBe(true)
  })

  it('a claim without claimed-machine is treated as this host', async () => {
    const l = await claimLiveness(claim({'claimed-machine': undefined, 'claimed-at': ago(8000), 'claimed-pid': 50}), fakeProbe({running: {50: undefined}}), NOW, 7200)
    expect(l.reason).toBe('pid-alive')
  })

  it('age falls back to updated_at; neither → young', async () => {
    const a = await claimLiveness(claim({updated_at: ago(9000)}), fakeProbe(), NOW, 7200)
    expect(a).toMatchObject({live: false, ageSeconds: 9000})
    const b = await claimLiveness(claim({}), fakeProbe(), NOW, 7200)
    expect(b).toMatchObject({live: true, reason: 'fresh', ageSeconds: null})
  })

  it('staleClaimIds looks at in_progress beads only', async () => {
    const s = parseTracker(
      [
        {id: 'a', status: 'in_progress', 'claimed-at': ago(9000)},
        {id: 'b', status: 'in_progress', 'claimed-at': ago(10)},
        {id: 'c', status: 'open', 'claimed-at': ago(9000)},
      ]
        .map((b) => JSON.stringify(b))
        .join('\n'),
      't',
    )
    expect([...(await staleClaimIds(s, fakeProbe(), NOW, 7200))]).toEqual(['a'])
  })

  it('orphanThresholdSec reads HELIX_ORPHAN_THRESHOLD', () => {
    expect(orphanThresholdSec({})).toBe(7200)
    expect(orphanThresholdSec({HELIX_ORPHAN_THRESHOLD: '30'})).toBe(30)
    expect(orphanThresholdSec({HELIX_ORPHAN_THRESHOLD: 'junk'})).toBe(7200)
  })
})

describe('real probe', () => {
  it('sees this process and its start token, and a killed child as dead', async () => {
    const probe = realProbe()
    expect(probe.isRunning(process.pid)).toBe(true)
    expect(currentStartToken()).toMatch(/^\d+$/)
    expect(probe.startToken(process.pid)).toBe(currentStartToken())
    const child = trackProcess(spawn('sleep', ['30']))
    const pid = child.pid!
    expect(pidRunning(pid)).toBe(true)
    expect(startTokenOf(pid)).toMatch(/^\d+$/)
    process.kill(pid, 'SIGKILL')
    await new Promise((r) => child.on('exit', r))
    expect(pidRunning(pid)).toBe(false)
    expect(probe.isRunning(2 ** 22 + 12345)).toBe(false)
  })

  it('finds a process whose command line names helix and the bead id', async () => {
    const child = trackProcess(spawn(process.execPath, ['-e', 'setTimeout(()=>{}, 20000)', 'helix-probe-test', 'hx-deadbeef']))
    try {
      await once(child, 'spawn') // exec done: the command line names the bead
      expect(await realProbe().helixProcessNamesBead('hx-deadbeef')).toBe(true)
      expect(await realProbe().helixProcessNamesBead('hx-notthere')).toBe(false)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it("a path or ref that only contains the bead id is not a process naming it (git at work in an attempt's worktree)", async () => {
    const child = trackProcess(spawn(process.execPath, ['-e', 'setTimeout(()=>{}, 20000)', '/p/.helix/worktrees/hx-cafe-1', 'helix/hx-cafe-1', 'hx-cafe.2']))
    try {
      await once(child, 'spawn')
      expect(await realProbe().helixProcessNamesBead('hx-cafe')).toBe(false)
      expect(await realProbe().helixProcessNamesBead('hx-cafe.2')).toBe(true)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('namesBead: the id as a word of its own, also after = or in quotes', () => {
    expect(namesBead('node /x/bin/run.js tracker close hx-b', 'hx-b')).toBe(true)
    expect(namesBead('helix recover --id=hx-b', 'hx-b')).toBe(true)
    expect(namesBead(`codex exec "work on 'hx-b' now"`, 'hx-b')).toBe(true)
    expect(namesBead('git -C /t/.helix/worktrees/hx-b-1 status', 'hx-b')).toBe(false)
    expect(namesBead('git push origin helix/hx-b', 'hx-b')).toBe(false)
    expect(namesBead('helix tracker show hx-bb', 'hx-b')).toBe(false)
  })
})
