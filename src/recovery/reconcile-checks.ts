/**
 * `helix doctor`'s reconciliation lines (SPEC 18.2) and the pruning of preserved
 * refs of beads that later landed. Doctor FAILs on every closed
 * bead whose work is off the base and on every reopen a run still owes; it lists
 * what reconciliation would do with the rest, one line each, and changes nothing.
 */
import {existsSync} from 'node:fs'
import {readPendingReopens} from '../state/pending-reopens.js'
import {readTracker} from '../tracker/store.js'
import {statusOf} from '../tracker/queries.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import type {ProjectPaths} from '../util/root.js'
import {sanitize} from '../util/sanitize.js'
import {scanAttempts} from '../git/leftovers.js'
import {planLine, planReconcile} from './reconcile-plan.js'
import {gitEnv} from '../git/run.js'
import {openRepo} from '../git/repo.js'
import {listPreserved, liveOwners, type PreservedRef} from './worktrees.js'

type Check = {level: 'ok' | 'warn' | 'fail'; what: string; detail: string; fix?: string}

export const DEFAULT_KEEP_PRESERVED_DAYS = 7
const DAY_MS = 86_400_000

async function rootBase(root: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const r = await openRepo(root, gitEnv(env)).run(['symbolic-ref', '-q', '--short', 'HEAD'])
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null
}

async function snapshot(paths: Pick<ProjectPaths, 'file'>): Promise<TrackerSnapshot | null> {
  return existsSync(paths.file) ? readTracker(paths.file).catch(() => null) : null
}

export async function reconcileChecks(paths: Pick<ProjectPaths, 'root' | 'pidFile' | 'runState' | 'file'>, env: NodeJS.ProcessEnv, now = Date.now()): Promise<Check[]> {
  const base = await rootBase(paths.root, env)
  const snap = await snapshot(paths)
  if (!base || !snap) return []
  const out: Check[] = []
  const owners = await liveOwners(paths)
  const owned = new Set([...owners.branches].filter((b) => b.startsWith('helix/')).map((b) => b.slice('helix/'.length)))
  const plan = planReconcile(snap, await scanAttempts(paths.root, gitEnv(env), base, owners.live ? owned : new Set()))
  for (const a of plan) {
    const remote = a.l.meta?.remote
    if (typeof remote === 'string') {
      // SPEC 20.2: judged against the remote, not this checkout's tracker
      const r = sanitize(remote)
      out.push({
        level: 'warn',
        what: 'leftover attempt',
        detail: `${sanitize(a.l.bead)} attempt ${a.l.attempt} (${a.commits} commit(s)) of a 'helix run --remote ${r}' that ended`,
        fix: `'helix run --remote ${r}' lands it at start when its bead is closed in the attempt and its claim on ${r} is still that run's, else keeps it on a preserved ref; a plain 'helix run' refuses it`,
      })
      continue
    }
    if (a.kind === 'finish')
      out.push({
        level: 'fail',
        what: 'not landed',
        detail: `closed bead ${sanitize(a.l.bead)} has its work off ${sanitize(base)} (attempt ${a.l.attempt}, ${a.commits} commit(s) on ${sanitize(a.l.branch ?? a.l.worktree ?? '?')})`,
        fix: "'helix run' finishes and lands it at start; 'helix recover --worktrees' keeps it on a preserved ref and reopens the bead",
      })
    else if (a.kind !== 'keep') out.push({level: 'warn', what: 'leftover attempt', detail: planLine(a, base).replace(/^helix: /, ''), fix: "'helix run' does this at start, or 'helix recover --worktrees' now"})
  }
  for (const p of await readPendingReopens(paths.root)) {
    const b = snap.byId.get(p.bead)
    if (b && statusOf(b) === 'closed')
      out.push({level: 'fail', what: 'not landed', detail: `closed bead ${sanitize(p.bead)} owes a reopen since ${sanitize(p.at)}: ${sanitize(p.note)}`, fix: "'helix run' reopens it at start"})
  }
  const prunable = await prunablePreserved(paths, env, DEFAULT_KEEP_PRESERVED_DAYS, now, snap)
  if (prunable.due.length + prunable.later.length > 0)
    out.push({
      level: 'ok',
      what: 'preserved work',
      detail: `${prunable.due.length + prunable.later.length} preserved ref(s) belong to beads that landed since; pruned ${DEFAULT_KEEP_PRESERVED_DAYS} days after the landing (prune now: 'helix recover --preserved')`,
    })
  return out
}

/**
 * Preserved refs of beads that are closed now (they landed later): `due` once
 * the bead has been closed `keepDays` days. A bead still open keeps its refs
 * (its next attempt is told about them).
 */
export async function prunablePreserved(
  paths: Pick<ProjectPaths, 'root' | 'file'>,
  env: NodeJS.ProcessEnv,
  keepDays: number,
  now = Date.now(),
  snap?: TrackerSnapshot | null,
): Promise<{due: PreservedRef[]; later: PreservedRef[]}> {
  const s = snap ?? (await snapshot(paths))
  const res = {due: [] as PreservedRef[], later: [] as PreservedRef[]}
  if (!s) return res
  // a bead that owes a reopen is closed with its work only on its preserved ref: never prune that
  const owed = new Set((await readPendingReopens(paths.root)).map((p) => p.bead))
  // only the refs: no worktree list (and no rev-parse) for them
  for (const p of await listPreserved(paths, env)) {
    const b = s.byId.get(p.bead)
    if (!b || statusOf(b) !== 'closed' || owed.has(p.bead)) continue
    const at = Date.parse(String(b.closed_at ?? b.updated_at ?? ''))
    if (Number.isFinite(at) && now - at >= keepDays * DAY_MS) res.due.push(p)
    else res.later.push(p)
  }
  return res
}

/** delete the due (or, with `all`, every prunable) preserved ref, compare-and-delete at the value read */
export async function prunePreserved(
  paths: Pick<ProjectPaths, 'root' | 'file'>,
  opts: {env: NodeJS.ProcessEnv; keepDays: number; all: boolean; dryRun: boolean; say: (line: string) => void; now?: number},
): Promise<string[]> {
  const {due, later} = await prunablePreserved(paths, opts.env, opts.keepDays, opts.now)
  const pick = opts.all ? [...due, ...later] : due
  const repo = openRepo(paths.root, gitEnv(opts.env))
  const done: string[] = []
  for (const p of pick) {
    const sha = await repo.revParse(p.ref)
    if (!sha) continue
    if (opts.dryRun) {
      opts.say(`helix: would prune ${sanitize(p.ref)} (${sanitize(p.bead)} landed since)`)
      done.push(p.ref)
      continue
    }
    if (await repo.deleteRef(p.ref, sha)) {
      opts.say(`helix: pruned ${sanitize(p.ref)} (${sanitize(p.bead)} landed since)`)
      done.push(p.ref)
    }
  }
  if (pick.length === 0) opts.say('helix: no preserved refs of landed beads to prune')
  return done
}
