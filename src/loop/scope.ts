/**
 * What a stage of the run loop may use of the run it belongs to (issue 30): the
 * ports, the options, the ledger and the run's shared bookkeeping. `Run`
 * (supervisor.ts) implements it; every stage (attempt, landing, review, dispatch,
 * the scheduler, reconcile) takes a `RunScope`, never the class. This module is a
 * leaf of the loop: it imports types only, and none from a stage, so no stage
 * imports the module that imports the scheduler (no import cycle, type-only
 * imports included: scripts/check-imports.mjs counts them).
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

/**
 * The narrow scopes (issue 30): what an end of an attempt touches, and no more.
 * A `RunScope` is one of each, so callers pass the run as they have it.
 */
/** the ledger, the tracker and the landing port: reopening, recording, preserving */
export type LedgerScope = Pick<RunScope, 'd' | 'ledger' | 'log' | 'now'>
/** the lines an attempt prints: the clock and its slot's tag */
export type LineScope = Pick<RunScope, 'd' | 'ledger' | 't' | 'slotTag'>

