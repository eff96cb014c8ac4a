/**
 * What a stage of the run loop may use of the run it belongs to. `RunScope`
 * is the whole shared surface: the ports, the options, the ledger and the run's
 * bookkeeping; `Run` (run.ts) implements it, and the run-level parts (the scheduler,
 * the drain, reconcile, build-once) take it. An attempt's stages take less: each
 * declares a `Scope<…>` of exactly what it touches (below). This module is a leaf of
 * the loop: it imports types only, and none from a stage, so no stage imports the
 * module that imports the scheduler (no import cycle, type-only imports included:
 * scripts/check-imports.mjs counts them).
 */
import type {SessionLogLike} from '../agents/types.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import type {SystemicDetector} from './systemic.js'
import type {RunLedger, SkipEntry} from './ledger.js'
import type {LoopDeps, LoopOptions, NotifyEventName} from './ports.js'
import type {Stop} from './stop.js'

export interface InFlight {
  id: string
  token: string
}

export interface RunScope {
  readonly d: LoopDeps
  readonly o: LoopOptions
  readonly ledger: RunLedger
  log: SessionLogLike | null
  /** beads left out of the next selection (claim conflicts, changed before claim); the scheduler clears it */
  readonly exclude: Set<string>
  /** slot → the bead it holds claimed */
  readonly inFlight: Map<number, InFlight>
  readonly systemic: SystemicDetector
  contextMd: string
  /** completed count a periodic alignment is due at (workers > 1: runs once every slot is idle) */
  alignDue: number | null
  readonly workers: number
  readonly skip: ReadonlyMap<string, SkipEntry>
  readonly backoffUntil: Readonly<Record<string, string>>
  readonly focusedEpic: string | null
  /** a quota pause holds every slot */
  readonly pausing: boolean
  readonly aborted: boolean
  now(): Date
  /** hh:mm:ss of now */
  t(): string
  /** `w2 ` with workers > 1, '' with one */
  slotTag(slot: number): string
  notify(event: NotifyEventName, fields: Record<string, unknown>): Promise<void>
  /** unclaim only while the claim is still ours (fencing token) */
  releaseClaim(snap: TrackerSnapshot, id: string, token: string): Promise<void>
  /** an exception that reached the loop, as the stop it is */
  errorStop(error: unknown): Stop
}

/** the run's own members a stage may name: every member of `RunScope` but its ports, options and ledger */
export type RunMember = Exclude<keyof RunScope, 'd' | 'o' | 'ledger'>

/** what a stage names of the run, by part: ports (`d`), options (`o`), ledger operations and the run's own members */
export interface Needs {
  d?: keyof LoopDeps
  o?: keyof LoopOptions
  ledger?: keyof RunLedger
  run?: RunMember
}

type Part<N, K extends keyof Needs> = N extends {[P in K]: infer V} ? V : never

/**
 * A stage's scope: exactly the ports, options, ledger operations and run
 * members `N` names, and nothing else. Each stage declares its own next to its code
 * (`ClaimScope` in attempt.ts, `DispatchScope` in dispatch.ts, …); a stage that calls
 * another takes the intersection of both. The run is every scope at once: `Run`
 * implements `RunScope`, and a `RunScope` is assignable to any `Scope<N>`, so the
 * scheduler hands the run itself to an attempt — no copy, since stages write shared
 * members (`contextMd`, `exclude`, `alignDue`) the next attempt must see. A unit test
 * can build a scope by hand from the fakes with only what the stage declares.
 */
export type Scope<N extends Needs> = {
  readonly d: Pick<LoopDeps, Extract<Part<N, 'd'>, keyof LoopDeps>>
  readonly o: Pick<LoopOptions, Extract<Part<N, 'o'>, keyof LoopOptions>>
  readonly ledger: Pick<RunLedger, Extract<Part<N, 'ledger'>, keyof RunLedger>>
} & Pick<RunScope, Extract<Part<N, 'run'>, RunMember>>
