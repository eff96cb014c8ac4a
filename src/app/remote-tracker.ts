/**
 * The `LoopTracker` port of `helix run --remote` (SPEC 19): every tracker write
 * is a commit pushed to the remote's base (queued while the remote is away), and
 * the fleet-wide attempt count with its backoff. Split out of remote-fleet.ts
 * (the 400-line rule, issue 19); the fleet passes in its read, claim and queue.
 */
import {appendNote, addLabel, closeBead, createBead, setFields} from '../tracker/ops.js'
import {mutateTracker} from '../tracker/store.js'
import {addSpend} from '../tracker/spend.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import type {ProjectPaths} from '../util/root.js'
import type {RemoteBase} from '../remote/base.js'
import type {LoopTracker} from '../loop/ports.js'
import {BLOCK_AFTER_ATTEMPTS, backoffSeconds} from '../loop/backoff.js'
import {blockedReason} from '../loop/lines.js'

/** fleet-wide attempt bookkeeping on the bead at the base (SPEC 19.2 step 6) */
export const ATTEMPTS_FIELD = 'helix-attempts'
export const RETRY_AFTER_FIELD = 'helix-retry-after'

export interface RemoteTrackerDeps {
  /** the fleet's options (FleetOptions) this port reads */
  o: {remote: string; host: string; env: NodeJS.ProcessEnv; now: () => Date}
  rb: RemoteBase
  later: (what: string, run: () => Promise<'done' | 'unreachable'>) => Promise<void>
  read: () => Promise<TrackerSnapshot>
  claim: (id: string) => Promise<{ok: true; token: string} | {ok: false; message: string}>
  release: (id: string, force?: boolean) => Promise<void>
}

export function createRemoteTracker({o, rb, later, read, claim, release}: RemoteTrackerDeps): {tracker: LoopTracker; recordFailure: (bead: string, reason: string) => Promise<void>} {
  const commit = (what: string, edit: (p: ProjectPaths) => Promise<void>) =>
    later(what, async () => ((await rb.commitTracker(`helix(${o.host}): ${what}`, edit)) === 'unreachable' ? 'unreachable' : 'done'))

  const tracker: LoopTracker = {
    read,
    staleClaims: async () => new Set<string>(),
    claim,
    unclaim: release,
    async close(id) {
      await commit(`close ${id}`, async (p) => void (await closeBead(p, id)))
    },
    async addSpend(id, tokens, costUsd) {
      // SPEC 14.6 with 19.1: the bead's spend is a tracker commit on the base, so every host counts it
      await commit(`spend on ${id}`, async (p) => void (await addSpend(p, id, tokens, costUsd)))
    },
    async reopen(id, reason) {
      // the base never saw this attempt's close (it travels with the landing): the note is what is left to say
      await commit(`note on ${id}`, async (p) => {
        await appendNote(p, id, reason, {once: true})
      })
    },
    async appendNote(id, text) {
      await commit(`note on ${id}`, async (p) => void (await appendNote(p, id, text, {once: true})))
    },
    async addLabel(id, label) {
      await commit(`label ${label} on ${id}`, async (p) => void (await addLabel(p, id, label)))
    },
    async setFields(id, fields) {
      await commit(`update ${id}`, async (p) => void (await setFields(p, id, fields)))
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

async function recordFailure(id: string, reason: string): Promise<void> {
    await commit(`attempt on ${id} failed`, async (p) => {
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
    })
  }

  return {tracker, recordFailure}
}
