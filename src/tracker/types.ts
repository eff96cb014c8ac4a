/**
 * Shared shapes of the tracker. The store (src/tracker/store.ts), the queries
 * (src/tracker/queries.ts) and the operations (src/tracker/ops.ts) implement
 * these; the run loop, recovery and status code consume them.
 */

export const STATUSES = ['open', 'in_progress', 'closed', 'blocked', 'proposed', 'cancelled'] as const
export type KnownStatus = (typeof STATUSES)[number]

export interface Dependency {
  issue_id: string
  depends_on_id: string
  type: string
  created_at?: string
  [key: string]: unknown
}

/** One tracker record. Unknown keys are kept verbatim. */
export interface Bead {
  id: string
  title?: string
  status?: string
  priority?: number
  issue_type?: string
  schema_version?: number
  owner?: string
  created_at?: string
  updated_at?: string
  labels?: string[]
  parent?: string
  description?: string
  acceptance?: string
  notes?: string
  dependencies?: Dependency[]
  [key: string]: unknown
}

/** A parsed tracker file. `beads` is file order with duplicate ids resolved last-wins. */
export interface TrackerSnapshot {
  beads: Bead[]
  byId: Map<string, Bead>
  /** ids that appeared more than once (for doctor) */
  duplicateIds: string[]
}

/** What the process side of claim liveness needs (SPEC 2.4); defined with its real implementation in src/proc/process-probe.ts. */
export type {ProcessProbe} from '../proc/process-probe.js'

export interface ClaimLiveness {
  live: boolean
  /** why: 'pid-alive' | 'helix-process' | 'fresh' | 'stale' */
  reason: 'pid-alive' | 'helix-process' | 'fresh' | 'stale'
  ageSeconds: number | null
  pid: number | null
}
