import {describe, expect, it} from 'vitest'
import {buildStatusModel, statusJson, type TrackerCounts} from '../../src/operator/model.js'
import {outputSize} from '../../src/operator/report.js'
import {displayWidth, renderStatusText, truncate, truncateStart} from '../../src/operator/text.js'
import {emptyRunState} from '../../src/state/run-state.js'
import type {Bead} from '../../src/tracker/types.js'
import type {RunState} from '../../src/state/types.js'
import {snapshot} from './helpers.js'

const NOW = new Date('2026-11-22T04:00:00.000Z')
const counts: TrackerCounts = {total: 0, open: 0, in_progress: 0, closed: 0, blocked: 0, proposed: 0, cancelled: 0, ready: 0}

function runState(over: Partial<RunState>): RunState {
  return {...emptyRunState(NOW), ...over}
}

describe('status model', () => {
  it('before any run: no active run, no last run, SPEC 7.1 JSON keys', () => {
    const m = buildStatusModel({snap: snapshot([]), counts, waiting: [], staleClaims: new Set(), runState: null, livePid: null, now: NOW})
    const j = statusJson(m)
    expect(Object.keys(j).sort()).toEqual(
      ['active_run', 'beads', 'current_cycle', 'injected_supervisory', 'last_stop_reason', 'parked_beads', 'run', 'running_bead', 'tracker', 'progress', 'last_output', 'paused_until', 'workers'].sort(),
    )
    expect(j).toMatchObject({active_run: null, running_bead: null, current_cycle: null, parked_beads: [], last_stop_reason: null, run: null, progress: null, workers: []})
    const text = renderStatusText(m)
    expect(text).toContain('Active Run: none')
    expect(text).toContain('Last Run: none')
    for (const h of ['Tracker:', '  Total:', '  Open:', '  In progress:', '  Closed:', '  Ready:', '  Blocked:', 'Claimed:', 'Parked:']) {
      expect(text).toContain(h)
    }
  })

  it('a claimed-at far in the future is no evidence of age: updated_at, else unknown (SPEC 13.3)', () => {
    const beads: Bead[] = [
      {id: 'hx-f1', title: 'skewed', status: 'in_progress', owner: 'helix', 'claimed-at': '2099-01-01T00:00:00Z', updated_at: '2026-11-22T03:58:00Z'},
      {id: 'hx-f2', title: 'no age', status: 'in_progress', owner: 'helix', 'claimed-at': '2099-01-01T00:00:00Z'},
    ]
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: null, livePid: null, now: NOW})
    expect(m.claimed.map((c) => c.claim_age_seconds)).toEqual([120, null])
    const text = renderStatusText(m)
    expect(text).toContain('hx-f1  skewed (by helix, 2m ago)')
    expect(text).toContain('hx-f2  no age (by helix, age unknown)')
  })

  it('during a run: pid, log, cycle, running bead with claim age, focused epic', () => {
    const beads: Bead[] = [
      {id: 'hx-epic', title: 'The epic', issue_type: 'epic', status: 'open'},
      {id: 'hx-1', title: 'Work', status: 'in_progress', parent: 'hx-epic', owner: 'helix', 'claimed-at': '2026-11-22T03:58:00Z', 'claimed-pid': 4242},
    ]
    const rs = runState({pid: 4242, phase: 'implementing', started_at: '2026-11-22T03:50:00Z', log: '/p/.helix-logs/helix-1.log', current_cycle: 3, current_bead: 'hx-1', current_bead_started_at: '2026-11-22T03:58:00Z', focused_epic: 'hx-epic', last_run: {started_at: '2026-11-21T01:00:00Z', ended_at: '2026-11-21T02:00:00Z', attempted_cycles: 7, completed_cycles: 5, total_tokens: 999, stop_reason: 'max_cycles'}})
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: {pid: 4242, started: '2026-11-22T03:50:00Z'}, now: NOW})
    const j = statusJson(m) as any
    expect(j.active_run).toEqual({pid: 4242, started: '2026-11-22T03:50:00Z', log: '/p/.helix-logs/helix-1.log'})
    expect(j.current_cycle).toBe(3)
    expect(j.running_bead).toEqual({id: 'hx-1', title: 'Work', claim_age_seconds: 120, started_at: '2026-11-22T03:58:00Z'})
    // SPEC 16.4: the previous run's stop reason and Last Run are hidden while a run is active
    expect(j.last_stop_reason).toBeNull()
    const text = renderStatusText(m)
    expect(text).toMatch(/^  PID: +4242$/m)
    expect(text).toMatch(/^  Log: +\/p\/\.helix-logs\/helix-1\.log$/m)
    expect(text).toMatch(/Cycle: +3 +Bead: hx-1 \(claimed 2m ago\)/)
    expect(text).toMatch(/Epic: +hx-epic The epic/)
    expect(text).toMatch(/^  hx-1 +Work \(by helix, pid 4242, 2m ago\)$/m)
    expect(text).not.toMatch(/Last Run/)
    expect(text).not.toMatch(/Cycles: +5 completed/)
    // between beads the phase says what the run is doing
    const drain = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: {...rs, phase: 'check', current_bead: null}, livePid: {pid: 4242, started: 'x'}, now: NOW})
    expect(renderStatusText(drain)).toMatch(/^  Cycle: +3 +\(check\) +Bead: none$/m)
  })

  it('run-state of a dead run is the last run, not an active one', () => {
    const rs = runState({pid: 1, started_at: '2026-11-22T03:00:00Z', updated_at: '2026-11-22T03:30:00Z', attempted_cycles: 4, completed_cycles: 3, total_tokens: 1200, stop_reason: 'completed', current_cycle: 4})
    const m = buildStatusModel({snap: snapshot([]), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: null, stalePid: 77, now: NOW})
    expect(m.active).toBeNull()
    expect(m.current_cycle).toBeNull()
    expect(m.lastRun).toMatchObject({completed_cycles: 3, attempted_cycles: 4, total_tokens: 1200, stop_reason: 'completed'})
    const text = renderStatusText(m)
    expect(text).toContain('stale PID file removed: pid=77 was not running')
    expect(text).toMatch(/Stopped: completed, 2026-11-22 03:30:00Z \(30m ago\)/)
  })

  it('parks beads with why and until when: backoff, skipped, blocked label, blocked status, deps', () => {
    const beads: Bead[] = [
      {id: 'a', title: 'backing off', status: 'open'},
      {id: 'b', title: 'drifted', status: 'open'},
      {id: 'c', title: 'labelled', status: 'open', labels: ['x', 'blocked']},
      {id: 'd', title: 'status blocked', status: 'blocked'},
      {id: 'e', title: 'waits', status: 'open', dependencies: [{issue_id: 'e', depends_on_id: 'a', type: 'blocks'}]},
      {id: 'f', title: 'closed with label', status: 'closed', labels: ['blocked']},
    ]
    const rs = runState({pid: 10, attempts: {a: 2}, backoff_until: {a: '2026-11-22T04:00:40Z', old: '2026-11-22T03:00:00Z'}, skipped: [{id: 'b', reason: 'queue drift: upstream governance fields changed during execution', attempts: 1}]})
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [{bead: beads[4], waitingOn: ['a']}], staleClaims: new Set(), runState: rs, livePid: {pid: 10, started: 'x'}, now: NOW})
    const j = statusJson(m) as any
    expect(j.parked_beads.map((p: any) => p.id)).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(j.parked_beads[0]).toMatchObject({reason: 'backoff after 2 failed attempts', next_eligible: '2026-11-22T04:00:40Z'})
    expect(j.parked_beads[1].reason).toContain('queue drift')
    expect(j.parked_beads[4]).toMatchObject({reason: 'waiting on a', next_eligible: null})
    const text = renderStatusText(m)
    // issue 20: relative, "in 40s", not a UTC timestamp
    expect(text).toMatch(/^  a +backoff after 2 failed attempts (in \d+[smh]|now)/m)
    expect(text).toMatch(/^  c +label 'blocked'/m)
  })

  it('fits 80×24: long titles cut, long lists capped with "… and N more"', () => {
    const beads: Bead[] = []
    for (let i = 0; i < 30; i++) beads.push({id: `hx-c${i}`, title: 'T'.repeat(200), status: 'in_progress', owner: 'helix', 'claimed-at': '2026-11-22T03:00:00Z'})
    for (let i = 0; i < 40; i++) beads.push({id: `hx-p${i}`, title: 'P'.repeat(200), status: 'blocked'})
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(['hx-c0']), runState: null, livePid: null, now: NOW})
    const text = renderStatusText(m, {width: 80, height: 24})
    const lines = text.replace(/\n$/, '').split('\n')
    expect(lines.length).toBeLessThanOrEqual(24)
    for (const l of lines) expect(Array.from(l).length).toBeLessThanOrEqual(80)
    expect(text).toMatch(/^  … and \d+ more$/m)
    const more = [...text.matchAll(/… and (\d+) more/g)].map((x) => Number(x[1]))
    expect(more.length).toBe(2)
    // shown + hidden = total, per list
    const shownClaimed = lines.filter((l) => l.startsWith('  hx-c')).length
    const shownParked = lines.filter((l) => l.startsWith('  hx-p')).length
    expect(shownClaimed + more[0]).toBe(30)
    expect(shownParked + more[1]).toBe(40)
    // the claim meta survives title truncation
    expect(lines.find((l) => l.startsWith('  hx-c0 '))).toMatch(/ — claimed by helix \(stale\), 1h ago$/)
  })

  it('wide (CJK) titles are cut by terminal columns, so no line wraps an 80-column pane', () => {
    const beads: Bead[] = [{id: 'hx-w', title: '修复状态面板的宽度问题'.repeat(8), status: 'in_progress', owner: 'helix', 'claimed-at': '2026-11-22T03:00:00Z'}]
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: null, livePid: null, now: NOW})
    const lines = renderStatusText(m).split('\n')
    const line = lines.find((l) => l.startsWith('  hx-w '))!
    expect(line).toContain('…')
    for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(80)
  })

  it('untrusted titles cannot drive the terminal', () => {
    const beads: Bead[] = [{id: 'x', title: 'evil\u001b[2J\r\nnext %s $(touch pwned)', status: 'blocked'}]
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: null, livePid: null, now: NOW})
    const text = renderStatusText(m)
    expect(text).not.toContain('\u001b')
    expect(text).not.toContain('\r')
    expect(text).toContain('%s $(touch pwned)')
  })

  it('a long log path keeps its file name', () => {
    const log = '/very/long/' + 'deep/'.repeat(20) + 'helix-20261122-040000.log'
    const rs = runState({pid: 9, log})
    const m = buildStatusModel({snap: snapshot([]), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: {pid: 9, started: 'x'}, now: NOW})
    const line = renderStatusText(m).split('\n').find((l) => l.startsWith('  Log:'))!
    expect(Array.from(line).length).toBe(80)
    expect(line.endsWith('/helix-20261122-040000.log')).toBe(true)
    expect(line).toContain('…')
  })

  it('truncate counts terminal columns: wide CJK and emoji take two, UTF-16 pairs are not split', () => {
    expect(truncate('ab😀cd', 5)).toBe('ab😀…')
    expect(truncate('ab😀cd', 4)).toBe('ab…')
    expect(truncate('abc', 3)).toBe('abc')
    expect(truncate('修复状态面板的宽度', 9)).toBe('修复状态…')
    expect(displayWidth(truncate('修复状态面板的宽度', 9))).toBeLessThanOrEqual(9)
    expect(truncateStart('/tmp/日志/helix.log', 12)).toBe('…/helix.log')
    expect(displayWidth('é')).toBe(1)
  })
})

describe('last run', () => {
  it("a stopped run's own summary wins (ended_at from last_run)", () => {
    const rs = runState({pid: 1, started_at: '2026-11-22T03:00:00Z', updated_at: '2026-11-22T03:59:00Z', stop_reason: 'blocked', last_run: {started_at: '2026-11-22T03:00:00Z', ended_at: '2026-11-22T03:45:00Z', attempted_cycles: 9, completed_cycles: 2, total_tokens: 10, stop_reason: 'blocked'}})
    const m = buildStatusModel({snap: snapshot([]), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: null, now: NOW})
    expect(m.lastRun).toMatchObject({ended_at: '2026-11-22T03:45:00Z', attempted_cycles: 9, stop_reason: 'blocked'})
    expect(statusJson(m).last_stop_reason).toBe('blocked')
  })

  it('a killed run (no summary, older last_run) shows its own counters and no stop reason', () => {
    const rs = runState({pid: 1, started_at: '2026-11-22T03:00:00Z', updated_at: '2026-11-22T03:10:00Z', attempted_cycles: 2, completed_cycles: 1, stop_reason: null, last_run: {started_at: '2026-11-21T00:00:00Z', ended_at: '2026-11-21T01:00:00Z', attempted_cycles: 5, completed_cycles: 5, total_tokens: 1, stop_reason: 'completed'}})
    const m = buildStatusModel({snap: snapshot([]), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: null, now: NOW})
    expect(m.lastRun).toMatchObject({attempted_cycles: 2, completed_cycles: 1, stop_reason: null})
    expect(renderStatusText(m)).toContain('Stopped: no stop recorded (killed?)')
  })

  it('an interrupted run says so once: `interrupted (SIGTERM)`, not `interrupted (interrupted (SIGTERM))`', () => {
    const rs = runState({pid: 1, started_at: '2026-11-22T03:00:00Z', updated_at: '2026-11-22T03:59:00Z', stop_reason: 'interrupted', stop_message: 'interrupted (SIGTERM)', last_run: {started_at: '2026-11-22T03:00:00Z', ended_at: '2026-11-22T03:45:00Z', attempted_cycles: 1, completed_cycles: 0, total_tokens: 0, stop_reason: 'interrupted'}})
    const m = buildStatusModel({snap: snapshot([]), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: null, now: NOW})
    const text = renderStatusText(m)
    expect(text).toMatch(/^ {2}Stopped: interrupted \(SIGTERM\), /m)
    expect(text).not.toContain('interrupted (interrupted')
  })
})

describe('status progress (SPEC 16.4)', () => {
  const iso = (msAgo: number) => new Date(NOW.getTime() - msAgo).toISOString()
  const beads: Bead[] = Array.from({length: 30}, (_, i) => ({id: `hx-${i}`, title: `A rather long bead title number ${i} that goes on and on`, status: i < 10 ? 'in_progress' : 'open', owner: i < 10 ? 'helix' : undefined, labels: i >= 25 ? ['blocked'] : undefined}))
  const workers = [1, 2, 3, 4].map((slot) => ({slot, bead: `hx-${slot}`, title: beads[slot].title as string, attempt: 1, started_at: iso(slot * 61_000), worktree: `/w/${slot}`, branch: `helix/w${slot}`, pid: 4242, timeout_s: 2700, last_output: `slot ${slot} says something fairly long about what the agent is doing right now`}))
  const rs = runState({pid: 4242, phase: 'paused', started_at: iso(7_200_000), current_cycle: 9, attempted_cycles: 8, completed_cycles: 6, total_tokens: 1_234_567, total_cost_usd: 12.5, max_cycles: null, workers, paused_until: iso(-1_800_000), pause_reason: 'quota', cycles: [{n: 1, bead: 'hx-0', outcome: 'COMPLETE', started_at: iso(7_000_000), ended_at: iso(6_880_000), duration_ms: 120_000, tokens: 1, rc: 0}]})

  it('a real quota pause reason (quota: <agent line>) still shows as "Paused: quota, resumes at HH:MM" (SPEC 14.3)', () => {
    const real = {...rs, pause_reason: "quota: You've hit your usage limit. try again at 9:41 PM"}
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: real, livePid: {pid: 4242, started: iso(7_200_000)}, now: NOW})
    const line = renderStatusText(m).split('\n').find((l) => l.startsWith('  Paused: '))
    expect(line).toMatch(/^ {2}Paused: quota, resumes at \d\d:\d\d$/)
  })

  it('four workers, paused, many claims and parked beads: at most 24 rows of 80 columns, every slot shown', () => {
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: {pid: 4242, started: iso(7_200_000)}, now: NOW})
    const lines = renderStatusText(m).trimEnd().split('\n')
    expect(lines.length).toBeLessThanOrEqual(24)
    for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(80)
    expect(lines.find((l) => l.startsWith('  Progress: '))).toMatch(/^ {2}Progress: \d+\/\d+ beads closed, \d+ left/)
    expect(lines.find((l) => l.startsWith('  Progress: '))).toMatch(/; 1,234,567 tokens, \$12\.50$/)
    expect(lines).toContain('  Cycles:  6 completed of 8 attempted, mean 2m, last 2m')
    expect(lines.find((l) => l.startsWith('  Started: '))).toMatch(/\(2h ago\)$/)
    expect(lines).toContain('  Cycle:   9  (paused)  Workers: 4 busy')
    for (const slot of [1, 2, 3, 4]) expect(lines.some((l) => l.startsWith(`  w${slot} hx-${slot}  ${slot}m ${slot}s of 45m  » slot ${slot} says`))).toBe(true)
    expect(lines.some((l) => l.startsWith('  Paused: quota, resumes at '))).toBe(true)
    // the workers' beads are not repeated under Claimed
    expect(lines.some((l) => /^ {2}hx-1 {2}/.test(l))).toBe(false)
    expect(lines.some((l) => l.startsWith('Last Run'))).toBe(false)
    const j = statusJson(m) as any
    expect(j.progress).toEqual({completed: 6, attempted: 8, max_cycles: null, tokens: 1_234_567, cost_usd: 12.5, elapsed_s: 7200, mean_cycle_s: 120})
    expect(j.workers).toHaveLength(4)
    expect(j.paused_until).toBe(iso(-1_800_000))
    expect(j.last_stop_reason).toBeNull()
  })

  it('a real pause reason (quota: <agent message>) shows as `Paused: quota, resumes at HH:MM`, within 80 columns', () => {
    const reason = "quota: [2026-11-23T17:52:27] ERROR: You've hit your usage limit. Upgrade to Pro or try again in 300s, which is a long message"
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: {...rs, pause_reason: reason}, livePid: {pid: 4242, started: iso(7_200_000)}, now: NOW})
    const lines = renderStatusText(m).trimEnd().split('\n')
    const paused = lines.filter((l) => l.startsWith('  Paused:'))
    expect(paused).toHaveLength(1)
    expect(paused[0]).toMatch(/^ {2}Paused: quota, resumes at \d\d:\d\d$/)
  })

  it('status --json workers[] carries the run-state fields too: attempt, started_at, worktree, branch (SPEC 15.4)', () => {
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: {pid: 4242, started: iso(7_200_000)}, now: NOW})
    const j = statusJson(m) as any
    expect(j.workers[1]).toMatchObject({slot: 2, bead: 'hx-2', attempt: 1, started_at: iso(122_000), worktree: '/w/2', branch: 'helix/w2', pid: 4242, elapsed_s: 122, timeout_s: 2700})
  })

  it('twelve workers still fit: the slots that do not fit are counted', () => {
    const many = Array.from({length: 12}, (_, i) => ({...workers[0], slot: i + 1, bead: `hx-${i}`}))
    const m = buildStatusModel({snap: snapshot(beads), counts, waiting: [], staleClaims: new Set(), runState: {...rs, workers: many}, livePid: {pid: 4242, started: iso(7_200_000)}, now: NOW})
    const lines = renderStatusText(m).trimEnd().split('\n')
    expect(lines.length).toBeLessThanOrEqual(24)
    const more = lines.find((l) => /^ {2}… and \d+ more slots$/.test(l))
    expect(more).toBeDefined()
    const shownSlots = lines.filter((l) => /^ {2}w\d+ /.test(l)).length
    expect(shownSlots + Number(/(\d+) more/.exec(more!)![1])).toBe(12)
    expect(lines.at(-1)).not.toBe('Tracker:')
  })
})

describe('status with workers agrees with itself (issue 29)', () => {
  const iso = (msAgo: number) => new Date(NOW.getTime() - msAgo).toISOString()
  const live = {pid: 4242, started: iso(600_000)}
  const slot = (n: number, bead: string) => ({slot: n, bead, title: `title of ${bead}`, attempt: 1, started_at: iso(60_000), worktree: `/w/${n}`, branch: `helix/${bead}-1`, pid: 4243})
  const base = (workers: ReturnType<typeof slot>[]) => runState({pid: 4242, phase: 'running', started_at: iso(600_000), current_cycle: 3, workers})
  const claimedBead = (id: string): Bead => ({id, title: `title of ${id}`, status: 'in_progress', owner: 'helix', 'claimed-at': iso(60_000), 'claimed-pid': 4242})
  const tracked = (beads: Bead[]): TrackerCounts => ({
    ...counts,
    total: beads.length,
    open: beads.filter((b) => b.status === 'open').length,
    in_progress: beads.filter((b) => b.status === 'in_progress').length,
    ready: beads.filter((b) => b.status === 'open').length,
  })

  it('one busy slot of a workers run: the wide layout names its bead, not `Bead: none`', () => {
    const beads = [claimedBead('hx-a'), {id: 'hx-b', title: 'b', status: 'open'}]
    const m = buildStatusModel({snap: snapshot(beads), counts: tracked(beads), waiting: [], staleClaims: new Set(), runState: base([slot(2, 'hx-a')]), livePid: live, now: NOW})
    const text = renderStatusText(m)
    expect(text).toMatch(/^ {2}Cycle: {3}3 {2}Bead: hx-a \(w2\) title of hx-a$/m)
    expect(text).not.toContain('Bead: none')
  })

  it('two busy slots: Claimed says they are the ones running above, so it agrees with `In progress: 2`', () => {
    const beads = [claimedBead('hx-a'), claimedBead('hx-b')]
    const m = buildStatusModel({snap: snapshot(beads), counts: tracked(beads), waiting: [], staleClaims: new Set(), runState: base([slot(1, 'hx-a'), slot(2, 'hx-b')]), livePid: live, now: NOW})
    const text = renderStatusText(m)
    expect(text).toMatch(/^ {2}In progress: 2$/m)
    expect(text).toMatch(/^ {2}w1 hx-a /m)
    expect(text).toMatch(/^ {2}w2 hx-b /m)
    expect(text).toMatch(/^Claimed \(besides the 2 running above\): none$/m)
  })

  it('a --remote run (claims on the remote, the local file says open): its slots count as in progress and claimed, not ready', () => {
    const beads: Bead[] = [{id: 'hx-a', title: 'a', status: 'open'}, {id: 'hx-b', title: 'b', status: 'open'}, {id: 'hx-c', title: 'c', status: 'open'}]
    const m = buildStatusModel({snap: snapshot(beads), counts: tracked(beads), waiting: [], staleClaims: new Set(), runState: base([slot(1, 'hx-a'), slot(2, 'hx-b')]), livePid: live, now: NOW})
    expect(m.tracker).toMatchObject({ready: 1, in_progress: 2, open: 1})
    expect(m.claimed.map((c) => c.id).sort()).toEqual(['hx-a', 'hx-b'])
    const text = renderStatusText(m)
    expect(text).toMatch(/^ {2}Ready: {7}1$/m)
    expect(text).toMatch(/^ {2}In progress: 2$/m)
    expect((statusJson(m) as {tracker: {in_progress: number}}).tracker.in_progress).toBe(2)
  })
})

describe('the size status draws for', () => {
  it('a terminal: its own width and height, or COLUMNS/LINES when set', () => {
    expect(outputSize({isTTY: true, columns: 120, rows: 40}, {})).toEqual({width: 120, height: 39})
    expect(outputSize({isTTY: true, columns: 120, rows: 40}, {COLUMNS: '39'})).toEqual({width: 39, height: 39})
  })

  it('a pipe or a file is not cut, unless COLUMNS says so', () => {
    expect(outputSize({isTTY: false}, {})).toEqual({width: Infinity, height: Infinity})
    expect(outputSize({isTTY: false}, {COLUMNS: '100'}).width).toBe(100)
    expect(outputSize({isTTY: false}, {COLUMNS: 'wide'}).width).toBe(Infinity)
  })

  it('an uncut render keeps a long parked reason whole', () => {
    const reason = 'intractable after 4 attempts with exponential backoff; last: rc=1: tests fail in test/very/long/path/to/a/spec.test.ts'
    const beads: Bead[] = [{id: 'hx-a', title: 'a', status: 'open', labels: ['blocked'], notes: `BLOCKED [2026-11-22T03:00:00Z]: ${reason}`}]
    const m = buildStatusModel({snap: snapshot(beads), counts: {...counts, total: 1, open: 1, blocked: 1}, waiting: [], staleClaims: new Set(), runState: null, livePid: null, now: NOW})
    expect(renderStatusText(m, {width: Infinity, height: Infinity})).toContain(reason)
    expect(renderStatusText(m)).not.toContain(reason)
  })
})
