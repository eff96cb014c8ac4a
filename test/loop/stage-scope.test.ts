import {describe, expect, it} from 'vitest'
import {acceptanceGate, type AcceptanceScope} from '../../src/loop/acceptance.js'
import {blockIfOverBudget, type BudgetScope} from '../../src/loop/bead-budget.js'
import {dispatch, type DispatchScope} from '../../src/loop/dispatch.js'
import {RunLedger} from '../../src/loop/ledger.js'
import {reopenNotLanded, type ReopenScope} from '../../src/loop/not-landed.js'
import type {LoopDeps, LoopLanding} from '../../src/loop/ports.js'
import type {ReviewScope} from '../../src/loop/review.js'
import {Stop} from '../../src/loop/stop.js'
import type {PendingReopen} from '../../src/state/pending-reopens.js'
import {hhmmss} from '../../src/util/time.js'
import {harness, type Harness} from './fakes.js'

// Issue 30: each stage of an attempt declares the ports, options, ledger operations and
// run members it uses (its `Scope`). The compiler holds a stage to its declaration; these
// tests hand a stage a scope built from the fakes with exactly what it declares, behind a
// guard that throws on any other member, so a stage that reaches past its scope (through
// a cast, say) fails here, and the declaration is shown to be enough to do the work.

/** `obj` behind a guard: reading a member it does not have throws, naming the member */
function strict<T extends object>(what: string, obj: T): T {
  return new Proxy(obj, {
    get(target, key, receiver) {
      if (typeof key === 'string' && key !== 'then' && !(key in target)) throw new Error(`the stage reached ${what}.${key}, which its scope does not declare`)
      return Reflect.get(target, key, receiver) as unknown
    },
  })
}

/** the named ports of the harness, and nothing else */
function ports<K extends keyof LoopDeps>(h: Harness, keys: K[]): Pick<LoopDeps, K> {
  return strict('r.d', Object.fromEntries(keys.map((k) => [k, h.deps[k]])) as Pick<LoopDeps, K>)
}

/** a begun ledger seen through the named operations only (methods bound, getters live) */
function ledgerOf<K extends keyof RunLedger>(h: Harness, keys: K[]): Pick<RunLedger, K> {
  const full = new RunLedger(h.deps)
  full.begin(null, {agent: 'codex', review_agent: 'claude'})
  const view = {}
  for (const k of keys) {
    const v: unknown = full[k]
    if (typeof v === 'function') Object.defineProperty(view, k, {value: (v as (...a: unknown[]) => unknown).bind(full), enumerable: true})
    else Object.defineProperty(view, k, {get: () => full[k], enumerable: true})
  }
  return strict('r.ledger', view as Pick<RunLedger, K>)
}

const now = (h: Harness) => () => new Date(h.clock.t)

describe('a stage runs on exactly the scope it declares (issue 30)', () => {
  it('the acceptance gate: scripts, a failure bead, the ledger record, one line', async () => {
    const h = harness([{id: 'a', title: 'A', status: 'closed'}], {}, {acceptance: {'/p/scripts/check-acceptance-unit.sh': 1, '/p/scripts/check-acceptance-lint.sh': 0}})
    const ledger = ledgerOf(h, ['supervisory', 'save'])
    const r: AcceptanceScope = strict('r', {d: ports(h, ['gates', 'tracker', 'out']), o: strict('r.o', {}), ledger, log: h.log, now: now(h)})
    await acceptanceGate(r, 3, 'a')
    expect(h.tracker.calls).toEqual(['create new-1 Acceptance failure: check-acceptance-unit.sh after a'])
    expect(h.tracker.get('new-1')['spec-id']).toBe('check-acceptance-unit.sh')
    expect(h.normal).toEqual(['helix: acceptance criteria not met after cycle 3 — failures filed as tracker issues'])
    expect(h.states.at(-1)?.injected_supervisory).toEqual([{id: 'new-1', type: 'acceptance-failure', triggering_cycle: 3, triggering_bead: 'a', created_at: '2026-03-01T10:00:00.000Z'}])
  })

  it('a bead at its budget: blocked with its label and note, skipped, notified', async () => {
    const h = harness([{id: 'b', title: 'B', 'helix-tokens': 900}], {})
    const events: string[] = []
    const r: BudgetScope = strict('r', {
      d: ports(h, ['tracker', 'out']),
      o: strict('r.o', {maxBeadTokens: 500, maxBeadCost: undefined}),
      ledger: ledgerOf(h, ['attemptsOf', 'skip', 'clearBackoff']),
      t: () => hhmmss(new Date(h.clock.t)),
      now: now(h),
      notify: async (event: string) => void events.push(event),
    })
    expect(await blockIfOverBudget(r, h.tracker.get('b'))).toBe(true)
    expect(h.tracker.calls).toEqual(['label b blocked', 'note b'])
    expect(h.tracker.get('b').notes).toBe('BUDGET [2026-03-01T10:00:00.000Z]: 900 of 500 tokens')
    expect(h.both).toEqual([`helix: [${hhmmss(new Date(h.clock.t))}] blocking b: 900 of 500 tokens (bead budget)`])
    expect(events).toEqual(['bead_blocked'])
    // under the cap: nothing is touched
    h.tracker.calls.length = 0
    expect(await blockIfOverBudget({...r, o: strict('r.o', {maxBeadTokens: 5000, maxBeadCost: undefined})}, h.tracker.get('b'))).toBe(false)
    expect(h.tracker.calls).toEqual([])
  })

  it('a reopen the tracker refuses is recorded as owed through the landing port', async () => {
    const h = harness([{id: 'c', title: 'C', status: 'closed'}], {})
    h.tracker.reopen = () => Promise.reject(new Error('helix: tracker locked'))
    const owed: PendingReopen[] = []
    const landing = strict('r.d.landing', {pending: {list: async () => owed, add: async (p: PendingReopen) => void owed.push(p), remove: async () => {}}}) as unknown as LoopLanding
    const r: ReopenScope = strict('r', {d: strict('r.d', {tracker: h.deps.tracker, out: h.deps.out, landing}), o: strict('r.o', {}), ledger: ledgerOf(h, ['reopened']), log: h.log, now: now(h)})
    expect(await reopenNotLanded(r, 'c', 'land check failed', 'refs/helix/preserved/c/1')).toBe(false)
    expect(owed).toEqual([{bead: 'c', note: 'NOT LANDED [2026-03-01T10:00:00.000Z]: land check failed; work kept at refs/helix/preserved/c/1', at: '2026-03-01T10:00:00.000Z'}])
    expect(h.both).toEqual(['helix: could not reopen c (tracker locked); the next run reopens it'])
    expect(h.log.events).toEqual(['reopen failed'])
  })

  it('one agent call: an unavailable agent is a stop, its spend and pid recorded, the operator notified', async () => {
    const h = harness([{id: 'd', title: 'D'}], {implementation: () => ({tokens: 42, verdict: {health: {kind: 'unavailable', reason: 'not logged in'}}})})
    const events: string[] = []
    const ledger = ledgerOf(h, ['state', 'output', 'agentPid', 'addTokens', 'quotaEvent'])
    const r: DispatchScope = strict('r', {
      d: ports(h, ['agents', 'out', 'tracker']),
      o: strict('r.o', {maxTokens: undefined, maxCost: undefined, signal: undefined, stallTimeoutSec: undefined, timeoutSec: undefined}),
      ledger,
      log: h.log,
      workers: 1,
      t: () => hhmmss(new Date(h.clock.t)),
      now: now(h),
      notify: async (event: string) => void events.push(event),
    })
    const res = await dispatch(r, h.deps.agents.impl, 'implementation', 'do it', {beadId: 'd', slot: 1})
    expect(res).toBeInstanceOf(Stop)
    expect((res as Stop).reason).toBe('agent_unavailable')
    expect((res as Stop).message).toBe('helix: agent codex unavailable: not logged in')
    expect(ledger.state.total_tokens).toBe(42)
    expect(h.calls.map((c) => `${c.action} ${c.beadId}`)).toEqual(['implementation d'])
    expect(events).toEqual(['agent_unavailable'])
  })

  it('the guard bites: a stage handed less than it declares fails on the first member it misses', async () => {
    const h = harness([{id: 'a', title: 'A'}], {}, {acceptance: {'/p/scripts/check-acceptance-unit.sh': 1}})
    // no `now`: the gate needs it to date the failure bead's record
    const short = strict('r', {d: ports(h, ['gates', 'tracker', 'out']), o: strict('r.o', {}), ledger: ledgerOf(h, ['supervisory', 'save']), log: h.log}) as unknown as AcceptanceScope
    await expect(acceptanceGate(short, 1, 'a')).rejects.toThrow('the stage reached r.now, which its scope does not declare')
  })

  it('the compiler holds a stage to its scope (checked by tsc -p tsconfig.check.json)', () => {
    type Ports = keyof ReviewScope['d']
    // @ts-expect-error a review names no landing port
    const landing: Extract<Ports, 'landing'> = 'landing'
    // @ts-expect-error nor the run's in-flight claims
    const inFlight: Extract<keyof ReviewScope, 'inFlight'> = 'inFlight'
    const agents: Extract<Ports, 'agents'> = 'agents'
    expect([landing, inFlight, agents]).toEqual(['landing', 'inFlight', 'agents'])
  })
})
