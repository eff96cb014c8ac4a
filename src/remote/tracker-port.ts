/**
 * The `LoopTracker` port of `helix run --remote` (SPEC 19): every tracker write
 * is a commit pushed to the remote's base (queued while the remote is away), and
 * the fleet-wide attempt count with its backoff. Split out of fleet.ts
 * (the 400-line rule); the fleet passes in its read, claim and queue.
 */
import {appendNote, addLabel, closeBead, createBead, setFields} from '../tracker/ops.js'
import {mutateTracker} from '../tracker/store.js'
import {addSpend} from '../tracker/add-spend.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import type {ProjectPaths} from '../util/root.js'
import type {RemoteBase} from './base.js'
import type {ClaimResult, LoopTracker} from '../loop/ports.js'
import {BLOCK_AFTER_ATTEMPTS, backoffSeconds} from '../loop/backoff.js'
import {blockedReason} from '../loop/wording.js'

/** fleet-wide attempt bookkeeping on the bead at the base (SPEC 19.2 step 6) */
export const ATTEMPTS_FIELD = 'helix-attempts'
export const RETRY_AFTER_FIELD = 'helix-retry-after'

export interface RemoteTrackerDeps {
  /** the fleet's options (FleetOptions) this port reads */
  o: {remote: string; host: string; env: NodeJS.ProcessEnv; now: () => Date}
  rb: RemoteBase
  later: (what: string, run: () => Promise<'done' | 'unreachable'>) => Promise<void>
  read: () => Promise<TrackerSnapshot>
  claim: (id: string) => Promise<ClaimResult>
  release: (id: string, force?: boolean) => Promise<void>
  /** this run holds the claim on `id`: its bookkeeping waits for the attempt's one commit */
  isHeld: (id: string) => boolean
}

export type TrackerEdit = (paths: ProjectPaths) => Promise<void>

export interface RemoteTrackerPort {
  tracker: LoopTracker
  /** the edits an attempt on `bead` has put off (spend, notes, labels), taken out of the buffer */
  takeDeferred(bead: string): TrackerEdit[]
  /** the same, left in the buffer (a landing that may still fail) */
  peekDeferred(bead: string): TrackerEdit[]
  /**
   * The attempt on `bead` ended without landing: its put-off edits, the fleet-wide
   * attempt count (unless `count` is false) and `note` go to the base as ONE commit
   * (SPEC 20.1: failure bookkeeping of one attempt is at most one commit).
   */
  endAttempt(bead: string, opts: {reason: string; count: boolean; note?: string | null}): Promise<void>
}

const NOT_LANDED = /^NOT LANDED \[[^\]]*\]: ([\s\S]*)$/

export function createRemoteTracker({o, rb, later, read, claim, release, isHeld}: RemoteTrackerDeps): RemoteTrackerPort {
  const deferred = new Map<string, TrackerEdit[]>()
  /** the NOT LANDED note endAttempt wrote, by bead: the loop's reopen with it writes nothing more */
  const noted = new Map<string, string>()
  const commitNow = (what: string, edit: TrackerEdit) =>
    later(what, async () => ((await rb.commitTracker(`helix(${o.host}): ${what}`, edit)) === 'unreachable' ? 'unreachable' : 'done'))
  /** an edit of a bead this run is attempting waits for the attempt's end; any other goes now */
  const commit = (id: string, what: string, edit: TrackerEdit) => {
    if (!isHeld(id)) return commitNow(what, edit)
    deferred.set(id, [...(deferred.get(id) ?? []), edit])
    return Promise.resolve()
  }

  const tracker: LoopTracker = {
    read,
    staleClaims: async () => new Set<string>(),
    claim,
    unclaim: release,
    async close(id) {
      await commitNow(`close ${id}`, async (p) => void (await closeBead(p, id)))
    },
    async addSpend(id, tokens, costUsd) {
      // SPEC 14.6 with 19.1: the bead's spend is on the base, so every host counts it; while
      // the attempt runs it travels with the attempt's one commit (SPEC 20.1)
      await commit(id, `spend on ${id}`, async (p) => void (await addSpend(p, id, tokens, costUsd)))
    },
    async reopen(id, reason) {
      // the note endAttempt wrote already, in the attempt's one commit
      const m = NOT_LANDED.exec(reason)
      if (m && noted.get(id) === m[1]) {
        noted.delete(id)
        return
      }
      // the base never saw this attempt's close (it travels with the landing): the note is what is left to say
      await commit(id, `note on ${id}`, async (p) => {
        await appendNote(p, id, reason, {once: true})
      })
    },
    async appendNote(id, text) {
      await commit(id, `note on ${id}`, async (p) => void (await appendNote(p, id, text, {once: true})))
    },
    async addLabel(id, label) {
      await commit(id, `label ${label} on ${id}`, async (p) => void (await addLabel(p, id, label)))
    },
    async setFields(id, fields) {
      await commit(id, `update ${id}`, async (p) => void (await setFields(p, id, fields)))
    },
    async create(i) {
      let id = ''
      const r = await rb.commitTracker(`helix(${o.host}): new bead ${i.title.slice(0, 60)}`, async (p) => {
        const b = await createBead(
          p,
          {title: i.title, type: i.issue_type, priority: i.priority, labels: i.labels, acceptance: i.acceptance, description: i.description, specId: i['spec-id']},
          o.env,
        )
        id = b.id
      })
      if (r === 'unreachable') throw new Error(`the remote ${o.remote} is unreachable; bead '${i.title.slice(0, 60)}' not created`)
      return id
    },
  }

  const countFailure = (id: string, reason: string): TrackerEdit =>
    async (p) => {
      await mutateTracker(p, (snap) => {
        const b = snap.byId.get(id)
        if (!b || b.status === 'closed') return {beads: null, result: null}
        const raw = Number(b[ATTEMPTS_FIELD])
        const n = (Number.isSafeInteger(raw) && raw > 0 ? raw : 0) + 1
        b[ATTEMPTS_FIELD] = n
        const t = o.now()
        b[RETRY_AFTER_FIELD] = new Date(t.getTime() + backoffSeconds(n, o.env) * 1000).toISOString()
        if (n >= BLOCK_AFTER_ATTEMPTS && !(b.labels ?? []).includes('blocked')) {
          b.labels = [...(b.labels ?? []), 'blocked']
          // the same words as one host's (SPEC 22.2); the fleet keeps only a count, so the last attempt's kind names it
          const note = `BLOCKED [${t.toISOString()}]: ${blockedReason(n, /^rc=/.test(reason), reason)}`
          b.notes = typeof b.notes === 'string' && b.notes.trim() !== '' ? `${b.notes.replace(/\s+$/, '')}\n\n${note}` : note
        }
        b.updated_at = t.toISOString()
        return {beads: snap.beads, result: null}
      })
    }

  function takeDeferred(bead: string): TrackerEdit[] {
    const edits = deferred.get(bead) ?? []
    deferred.delete(bead)
    return edits
  }

  async function endAttempt(bead: string, opts: {reason: string; count: boolean; note?: string | null}): Promise<void> {
    const edits = takeDeferred(bead)
    if (opts.count) edits.push(countFailure(bead, opts.reason))
    if (opts.note) {
      const text = opts.note
      const m = NOT_LANDED.exec(text)
      if (m) noted.set(bead, m[1] as string)
      edits.push(async (p) => void (await appendNote(p, bead, text, {once: true})))
    }
    if (edits.length === 0) return
    await commitNow(opts.count ? `attempt on ${bead} failed` : `bookkeeping of ${bead}`, async (p) => {
      for (const e of edits) await e(p)
    })
  }

  return {tracker, takeDeferred, endAttempt, peekDeferred: (bead) => [...(deferred.get(bead) ?? [])]}
}
