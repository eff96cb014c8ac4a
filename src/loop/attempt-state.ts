/**
 * The states of one attempt as data, in a leaf module: the
 * stages (attempt.ts, land-step.ts) return them, settle.ts ends them.
 *
 *   selected → claimed → dispatched → classified → gated → reviewed → (terminal)
 *
 * A terminal state says WHY the attempt ended and carries what `settle()` needs to
 * undo or keep: the claim, the slot, the ledger's worker entry and the workspace.
 * No stage cleans up after itself; the table is in docs/run-loop.md ("Settling").
 */
import type {DispatchResult} from '../agents/types.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import type {Fingerprint} from './fingerprint.js'
import type {FailedOutcome} from './wording.js'
import type {Outcome} from './outcome.js'
import type {Workspace} from './ports.js'
import type {Selection} from './selection.js'
import type {Step} from './stop.js'

export interface AttemptCtx {
  slot: number
  n: number
  target: Bead
  ready: number
  batchIds: string[]
  fp: Fingerprint
  openChildrenBefore: Set<string>
  /** open, unclaimed beads at the claim that are not the attempt's: closing one is not its agent's to do (foreign-closes.ts) */
  openBefore?: Set<string>
  /** every bead id at the claim (a bead that goes during the attempt is named, foreign-closes.ts) */
  idsBefore?: string[]
  /** beads in the tracker when the attempt was claimed (SPEC 13.4) */
  beadsBefore: number
  token: string
  startedAt: Date
  mark: string | null
  ws: Workspace | null
  /** HEAD at the claim (one worker in the checkout): the cycle's commits are counted from it */
  headBefore: string | null
  /** SPEC 20.5: the review's verdict when one ran (a pull request's body names it) */
  review?: string
}

export type Completed = 'COMPLETE' | 'SALVAGED'

/** What becomes of a claimed bead when its attempt ends before landing. */
export type ClaimEnd =
  /** unclaim it while the claim is still ours; `snap` is the tracker read it is judged on (null: read it now) */
  | {do: 'release'; snap: TrackerSnapshot | null}
  /** the agent closed it under drift: reopen it with this note */
  | {do: 'reopen'; note: string}
  /** it was not landed (SPEC 18.1a): reopen it with a NOT LANDED note naming the kept work */
  | {do: 'reopen-not-landed'; why: string; ref: string | null}
  /** the run stops: the claim stays in flight and the run's finish releases it */
  | {do: 'keep'}
  /** written nowhere: the tracker lost its beads (SPEC 13.4); the slot lets go of it */
  | {do: 'leave'}
  /** nothing to undo: the bead is gone, already closed by the agent, or its drift was already noted */
  | {do: 'none'}

export type AttemptState =
  | {kind: 'selected'; slot: number; snap: TrackerSnapshot; sel: Selection}
  | {kind: 'claimed'; a: AttemptCtx}
  | {kind: 'dispatched'; a: AttemptCtx; res: DispatchResult}
  | {kind: 'classified'; a: AttemptCtx; res: DispatchResult; outcome: Outcome; after: TrackerSnapshot; bead: Bead | undefined; newChildren: string[]}
  | {kind: 'gated'; a: AttemptCtx; res: DispatchResult; outcome: Completed}
  | {kind: 'reviewed'; a: AttemptCtx; res: DispatchResult; outcome: Completed}
  | Terminal

/**
 * The ends of an attempt. `step` (where present) is what the run does next.
 * - landed: on the base, on a kept branch, in a pull request, or (one worker) in the checkout
 * - failed: a bead outcome that counts against the bead (FAILED, NOT_COMPLETED, STALLED, TIMEOUT, NOT_LANDED)
 * - passed: never claimed (a bad id, changed before claim, over budget, a claim conflict)
 * - unprepared: claimed, but its worktree could not be made (SPEC 18.3a)
 * - drifted: the bead's governance changed under the agent (before the outcome or before landing)
 * - decomposed: the agent split the bead into children; it becomes an epic
 * - paused: the agent's quota ran out; not the bead's fault
 * - stopped: the run stops with the attempt in flight (budget, interrupt, agent unavailable, review, resolve, a lost tracker)
 */
export type Terminal =
  | {kind: 'landed'; a: AttemptCtx; res: DispatchResult; outcome: Completed}
  | {kind: 'failed'; a: AttemptCtx; res: DispatchResult; outcome: FailedOutcome; reason: string; claim: ClaimEnd; preserve: boolean}
  | {kind: 'passed'; why: string}
  | {kind: 'unprepared'; slot: number; id: string; token: string; why: string}
  | {kind: 'drifted'; a: AttemptCtx; before: 'outcome' | 'landing'; claim: ClaimEnd}
  | {kind: 'decomposed'; a: AttemptCtx; after: TrackerSnapshot; children: number}
  | {kind: 'paused'; a: AttemptCtx; after: TrackerSnapshot; resetAt: string | null; message: string}
  | {kind: 'stopped'; a: AttemptCtx; step: Step; why: string; claim: ClaimEnd; freeSlot: boolean; counted: boolean}

export type TerminalKind = Terminal['kind']

/** every terminal kind, once (the compiler checks the list is complete and has nothing else) */
export const TERMINAL_KINDS = ['landed', 'failed', 'passed', 'unprepared', 'drifted', 'decomposed', 'paused', 'stopped'] as const satisfies readonly TerminalKind[]
type Missing = Exclude<TerminalKind, (typeof TERMINAL_KINDS)[number]>
const complete: Missing extends never ? true : never = true
void complete

const TERMINAL: ReadonlySet<string> = new Set<string>(TERMINAL_KINDS)

export function isTerminal(s: AttemptState): s is Terminal {
  return TERMINAL.has(s.kind)
}

export function assertNever(x: never): never {
  throw new Error(`unhandled attempt state ${JSON.stringify(x)}`)
}
