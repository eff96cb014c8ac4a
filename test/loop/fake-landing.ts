import type {LandOptions, LandResult, LoopLanding, Repair, Workspace} from '../../src/loop/ports.js'
import type {HelixError} from '../../src/util/errors.js'
import {EventLog} from '../support/latch.js'

/**
 * The one fake of the worktree landing (LoopLanding) for --workers tests: records what
 * the loop asked (`events`, awaitable: `await landing.events.seen('landed a')`), lands
 * everything unless told to fail a bead once (`fail`), holds a bead's landing until a
 * promise settles (`hold`), and can refuse the base (`baseError`). SPEC 20.4: `repairs`
 * queues what a bead's landings need repaired (one per land call with repair allowed,
 * `null` lands), `verify` queues what `verifyRepair` answers (null: done).
 */
export class FakeLanding implements LoopLanding {
  readonly log = new EventLog()
  fail = new Map<string, string>()
  hold = new Map<string, Promise<unknown>>()
  baseError: HelixError | null = null
  repairs = new Map<string, (Repair | null)[]>()
  verify = new Map<string, (string | null)[]>()
  landOpts: LandOptions[] = []
  get events(): string[] {
    return this.log.list
  }
  async base() {
    if (this.baseError) throw this.baseError
    return 'main'
  }
  async ensureExcludes() {
    this.log.push('excludes')
  }
  async prepare(bead: string, attempt: number, slot: number): Promise<Workspace> {
    this.log.push(`prepare ${bead} w${slot}`)
    return {slot, bead, attempt, dir: `/p/.helix/worktrees/${bead}-${attempt}`, branch: `helix/${bead}-${attempt}`, baseTip: 'b0'}
  }
  async land(ws: Workspace, o: LandOptions = {}): Promise<LandResult> {
    this.log.push(`land ${ws.bead}`)
    this.landOpts.push(o)
    await this.hold.get(ws.bead)
    const queue = this.repairs.get(ws.bead)
    const repair = queue && queue.length > 0 ? queue.shift() : null
    if (repair) {
      const reason = repair.kind === 'conflict' ? `conflict in ${repair.paths.join(', ')}` : `land check failed (rc=${repair.rc})`
      if (!o.repair) {
        this.log.push(`not landed ${ws.bead}`)
        return {landed: false, reason, preservedRef: `refs/helix/preserved/${ws.bead}/${ws.attempt}`, ...(repair.kind === 'check' ? {checkTail: repair.tail} : {})}
      }
      if (repair.kind === 'check') o.onCheck?.({passed: false, rc: repair.rc, ms: 2000, tail: repair.tail, onto: repair.onto})
      this.log.push(`repair ${ws.bead} ${repair.kind}`)
      return {landed: false, reason, preservedRef: null, repair}
    }
    const reason = this.fail.get(ws.bead)
    if (reason) {
      this.fail.delete(ws.bead)
      this.log.push(`not landed ${ws.bead}`)
      return {landed: false, reason, preservedRef: `refs/helix/preserved/${ws.bead}/${ws.attempt}`}
    }
    this.log.push(`landed ${ws.bead}`)
    return {landed: true, sha: `sha-${ws.bead}`, commits: [`c-${ws.bead}`]}
  }
  async verifyRepair(ws: Workspace, repair: Repair): Promise<string | null> {
    const answer = this.verify.get(ws.bead)?.shift() ?? null
    this.log.push(`verify ${ws.bead} ${repair.kind}: ${answer ?? 'ok'}`)
    return answer
  }
  async commitsOf(ws: Workspace) {
    return [`c1 work of ${ws.bead}`]
  }
  async preserve(ws: Workspace, reason: string) {
    this.log.push(`preserve ${ws.bead} (${reason})`)
    return `refs/helix/preserved/${ws.bead}/${ws.attempt}`
  }
  async keepBranch(ws: Workspace) {
    this.log.push(`keep ${ws.bead}`)
    return ws.branch
  }
  async preservedRef(bead: string) {
    const e = this.events.find((x) => x.startsWith(`not landed ${bead}`))
    return e ? `refs/helix/preserved/${bead}/1` : null
  }
}
