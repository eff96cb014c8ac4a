/**
 * SPEC 20.3–20.4 in the loop: a worker's landing with the land check's lines, and a
 * conflict or a failing check sent back to the same agent (`resolve`) instead of
 * throwing the attempt away. The landing port leaves the worktree as it is and says
 * what needs repair; this step dispatches the resolve action, asks the port to verify
 * the result, and lands again. Only a round that fails its verification or the check
 * counts against `--resolve-attempts`; a new conflict after a good round is a race.
 */
import type {ResolveBrief} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'
import type {AttemptCtx} from './attempt-state.js'
import {recordBeadSpend, type SpendScope} from './bead-budget.js'
import {dispatchPausing, type PausingScope} from './dispatch.js'
import type {LandCheckEvent, LandOptions, LandResult, Repair, Workspace} from './ports.js'
import {oweReopen} from './not-landed.js'
import {Stop, interruptStop} from './stop.js'
import type {Scope} from './scope.js'

/** the lines of a landing: the clock, the slot's tag, the land check's lines in the session log */
export type LandLineScope = Scope<{d: 'out'; run: 't' | 'slotTag' | 'log' | 'workers'}>
/** a landing with resolve rounds: the landing port, the agent, the tracker (to see a resolve left it alone) */
export type ResolveScope = LandLineScope &
  PausingScope &
  SpendScope &
  Scope<{d: 'landing' | 'agents' | 'tracker' | 'trackerDir'; o: 'resolveAttempts' | 'landCheck' | 'signal'; run: 'aborted'}>
/** the attempt as its lines name it */
type Named = Pick<AttemptCtx, 'slot' | 'n' | 'target'>

export const DEFAULT_RESOLVE_ATTEMPTS = 2

/** the last lines of a bead's failed land check, for its next attempt's prompt (SPEC 20.3); kept per run (the scope handed to the stages is the run) */
const checkTails = new WeakMap<object, Map<string, string[]>>()

/** The execution-context note of a bead whose last landing failed its land check (consumed once). */
export function takeCheckTail(r: object, bead: string): string {
  const m = checkTails.get(r)
  const tail = m?.get(bead)
  if (!tail) return ''
  m?.delete(bead)
  return `\n\n## The land check failed on ${bead}\n\nThe last attempt's work failed the team's land check on the base it would have landed on. Its last lines:\n\n\`\`\`\n${tail.map((l) => sanitize(l)).join('\n')}\n\`\`\`\n`
}

export type LandEnd = {kind: 'result'; lr: LandResult; rounds: number} | {kind: 'stop'; stop: Stop; reason: string}

function head(r: Pick<LandLineScope, 't' | 'slotTag'>, a: Named): string {
  return `helix: [${r.t()}] ${r.slotTag(a.slot)}cycle ${a.n}:`
}

/** `… land check passed (43s)` / `… land check FAILED (rc=1, 12s): <last line> — log LA–LB` */
function checkLine(r: LandLineScope, a: Named, ev: LandCheckEvent): void {
  const id = sanitize(a.target.id)
  const secs = Math.round(ev.ms / 1000)
  if (ev.passed) {
    r.d.out.both(`${head(r, a)} ${id} land check passed (${secs}s)`)
    return
  }
  const log = r.log
  let range = 'none'
  if (log && ev.tail.length > 0) {
    const first = log.lines + 1
    for (const line of ev.tail) log.agentLine(line, {land_check: a.target.id, ...(r.workers > 1 ? {slot: a.slot} : {})})
    range = `L${first}–L${log.lines}${r.workers > 1 ? ` (w${a.slot})` : ''}`
  }
  const how = ev.ended === 'timeout' ? `timed out, ${secs}s` : ev.ended === 'stall' ? `stalled, ${secs}s` : `rc=${ev.rc}, ${secs}s`
  const last = sanitize(ev.tail.at(-1) ?? '').slice(0, 160)
  r.d.out.both(`${head(r, a)} ${id} land check FAILED (${how})${last ? `: ${last}` : ''} — log ${range}`)
}

async function brief(r: Scope<{d: 'landing'; o: 'landCheck'}>, ws: Workspace, repair: Repair, problem: string | undefined): Promise<ResolveBrief> {
  const commits = r.d.landing?.commitsOf ? await r.d.landing.commitsOf(ws, repair.onto) : []
  const b: ResolveBrief = {kind: repair.kind, baseTip: repair.onto, branch: ws.branch, commits}
  if (repair.kind === 'conflict') b.paths = repair.paths
  else {
    b.check = r.o.landCheck ?? ''
    b.tail = repair.tail
    b.logFile = repair.logFile
  }
  if (problem) b.problem = problem
  return b
}

/** the bead as the tracker holds it, to see that a resolve left it alone */
async function beadText(r: Scope<{d: 'tracker'}>, id: string): Promise<string> {
  return JSON.stringify((await r.d.tracker.read()).byId.get(id) ?? null)
}

/**
 * Land a worker's completed attempt, sending conflicts and red checks back to the
 * agent. Returns the landing's result, or the stop that ended it (a resolve call
 * that found the agent unavailable, a budget, an interrupt; the worktree is then
 * still there for the caller to preserve).
 */
export async function landWithRepair(r: ResolveScope, a: AttemptCtx, ws: Workspace, res0: {text?: string}): Promise<LandEnd> {
  const landing = r.d.landing!
  const id = a.target.id
  const max = r.o.resolveAttempts ?? DEFAULT_RESOLVE_ATTEMPTS
  let failed = 0
  const info = {summary: res0.text, ...(a.review ? {review: a.review} : {})}
  const beforeRemove = oweReopen(r, id)
  const opts = (): LandOptions => ({repair: failed < max && landing.verifyRepair !== undefined, attemptNo: ws.attempt, beforeRemove, onCheck: (ev) => checkLine(r, a, ev), info, ...(r.o.signal ? {signal: r.o.signal} : {})})
  let lr = await landing.land(ws, opts())
  let problem: string | undefined
  let rounds = 0
  while (!lr.landed && lr.repair) {
    const repair = lr.repair
    const agent = r.d.agents.impl
    const what = repair.kind === 'conflict' ? `CONFLICT in ${repair.paths.length} file(s)` : 'land check failed'
    r.d.out.both(`${head(r, a)} ${sanitize(id)} ${what} → resolve (${sanitize(agent.name)})`)
    const before = await beadText(r, id)
    const prompt = await r.d.agents.prompt('resolve', {beadId: id, root: ws.dir, repair: await brief(r, ws, repair, problem)})
    const trackerDir = ws.trackerDir ?? r.d.trackerDir
    const res = await dispatchPausing(r, agent, 'resolve', prompt, {beadId: id, claimToken: a.token, slot: a.slot, cwd: ws.dir, ...(trackerDir ? {env: {DDX_BEAD_DIR: trackerDir}} : {})})
    rounds++
    if (res instanceof Stop) return {kind: 'stop', stop: res, reason: res.reason === 'budget' ? 'budget' : `the run stopped (${String(res.detail ?? res.reason).replace(/^helix: /, '')})`}
    if (r.aborted) return {kind: 'stop', stop: interruptStop(r.o.signal), reason: 'interrupted'}
    let bad = await landing.verifyRepair!(ws, repair)
    if (!bad && (await beadText(r, id)) !== before) bad = 'the resolve changed the tracker'
    // SPEC 14.6: the resolve's spend is the bead's (written after the tracker comparison)
    await recordBeadSpend(r, id, res.tokens, res.verdict.costUsd)
    r.log?.event('resolve round', {bead: id, round: rounds, kind: repair.kind, problem: bad, slot: a.slot})
    if (bad) {
      failed++
      r.d.out.normal(`${head(r, a)} ${sanitize(id)} resolve not done: ${sanitize(bad)}`)
      if (failed >= max) return {kind: 'result', rounds, lr: {landed: false, reason: `not resolved after ${failed} round(s): ${bad}`, preservedRef: await landing.preserve(ws, `not resolved: ${bad}`, {beforeRemove})}}
      problem = bad
      continue
    }
    problem = undefined
    lr = await landing.land(ws, opts())
    if (!lr.landed && lr.repair?.kind === 'check') {
      // the check failed on the repaired candidate: a spent round; a conflict here is a race (the base moved again)
      failed++
      if (failed >= max) {
        const reason = `${lr.reason}, not resolved after ${failed} round(s)`
        lr = {landed: false, reason, preservedRef: await landing.preserve(ws, reason, {beforeRemove}), checkTail: lr.repair.tail}
      }
    }
  }
  if (!lr.landed && lr.checkTail) {
    const m = checkTails.get(r) ?? new Map<string, string[]>()
    m.set(id, lr.checkTail)
    checkTails.set(r, m)
  }
  if (lr.landed && rounds > 0) r.log?.event('resolved', {bead: id, rounds, slot: a.slot})
  return {kind: 'result', lr, rounds}
}

/** the landed line: `resolved, landed <id>` after a resolve, else the plain one */
export function landedLine(r: Pick<LandLineScope, 't' | 'slotTag'>, a: Named, lr: Extract<LandResult, {landed: true}>, resolved: boolean): string {
  const k = lr.commits.length
  const tail = `landed ${sanitize(a.target.id)} (${k} commit${k === 1 ? '' : 's'}, ${sanitize(lr.sha.slice(0, 12))})`
  return resolved ? `${head(r, a)} resolved, ${tail}` : `helix: [${r.t()}] ${r.slotTag(a.slot)}${tail}`
}
