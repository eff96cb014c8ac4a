/**
 * The types of the `--remote` fleet (fleet.ts), split out of it (the
 * 400-line rule): its options, a claim this run holds, and the port the remote
 * tracker and landing use.
 */
import type {Claims} from './claim-refs.js'
import type {RemoteBase} from './base.js'
import type {ProjectPaths} from '../util/root.js'
import type {LoopTracker, Waiting, Workspace} from '../loop/ports.js'

export interface FleetOptions {
  root: string
  remote: string
  base: string
  trackerRel: string
  scratch: string
  env: NodeJS.ProcessEnv
  host: string
  runId: string
  pid: number
  leaseSec: number
  maxOfflineSec: number
  now: () => Date
  log: (line: string) => void
  /** true when a pid on this host is alive (a claim of this host whose run died is taken over at once) */
  pidAlive: (pid: number) => boolean
  onMaxOffline: () => void
  /** SPEC 20.5 (--land pr): the base as the tracker port sees it (bookkeeping on refs/helix/state); default the plain remote base */
  wrapBase?: (rb: RemoteBase) => RemoteBase
}

export interface Held {
  bead: string
  sha: string
  attempt: number
  token: string
  expiresAt: number
  ws: Workspace | null
  /** the lease ended unrenewed or another run took it: no renewal; a landing waiting for the remote may win it back by a renewal expecting `sha` */
  lost: boolean
  /** landing owns the ref: no renewal */
  landing: boolean
  renewing: Promise<void> | null
}

export interface Fleet {
  /** this run's id in its claims (`host:pid:time`) */
  runId: string
  host: string
  tracker: LoopTracker
  rb: RemoteBase
  claims: Claims
  held: Map<string, Held>
  /** stop the attempt on `bead` when its lease is lost */
  onLost(bead: string, fn: () => void): () => void
  /** beads another run holds (live), for the scheduler's wait instead of a drain */
  waiting(): Array<Waiting>
  /** true once the remote was away longer than --max-offline */
  offlineExceeded(): boolean
  offline(): boolean
  /** queue a remote write for when the remote answers (order kept) */
  later(what: string, run: () => Promise<'done' | 'unreachable'>): Promise<void>
  /** the remote answered: flush what waited */
  online(): Promise<void>
  /** marks the remote as unreachable (for the offline clock); `message` is git's own line, quoted once */
  unreachable(message?: string | null): void
  /** release our claim on `bead` now (compare-and-delete at our value; later when the remote is away) */
  release(bead: string): Promise<void>
  /**
   * An attempt that ended without landing: its put-off bookkeeping, the fleet-wide count
   * (unless `count` is false: back off, block after 4) and `note`, as ONE commit on the base
   */
  endAttempt(bead: string, opts: {reason: string; count: boolean; note?: string | null}): Promise<void>
  /** the edits a landing folds into its one tracker commit (spend, notes of the attempt), left in the buffer until `landed` */
  deferredOf(bead: string): Array<(paths: ProjectPaths) => Promise<void>>
  /** a landing went out: nothing of the attempt is left to write */
  landed(bead: string): void
  /**
   * SPEC 20.2: take over the claim a dead run of this host made for a leftover attempt
   * (a renewal expecting its value), and hold it for `ws`; false when the remote refused.
   * A claim adopted already for that attempt (at the start's plan, `ws` null then) is kept
   * and given `ws`.
   */
  adopt(bead: string, theirs: string, attempt: number, token: string, ws: Workspace | null): Promise<boolean>
  /** refs under `refs/helix/claims/` that are not claims but block one (`<id>/…`), by the bead they block */
  strays(): Map<string, string>
  start(): void
  /** stop renewals; release what is still held (best effort) */
  close(): Promise<void>
}
