import type {LandResult, LoopLanding, Workspace} from '../../src/loop/ports.js'
import type {HelixError} from '../../src/util/errors.js'
import {EventLog} from '../support/latch.js'

/**
 * The one fake of the worktree landing (LoopLanding) for --workers tests: records what
 * the loop asked (`events`, awaitable: `await landing.events.seen('landed a')`), lands
 * everything unless told to fail a bead once (`fail`), holds a bead's landing until a
 * promise settles (`hold`), and can refuse the base (`baseError`).
 */
export class FakeLanding implements LoopLanding {
  readonly log = new EventLog()
  fail = new Map<string, string>()
  hold = new Map<string, Promise<unknown>>()
  baseError: HelixError | null = null
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
  async land(ws: Workspace): Promise<LandResult> {
    this.log.push(`land ${ws.bead}`)
    await this.hold.get(ws.bead)
    const reason = this.fail.get(ws.bead)
    if (reason) {
      this.fail.delete(ws.bead)
      this.log.push(`not landed ${ws.bead}`)
      return {landed: false, reason, preservedRef: `refs/helix/preserved/${ws.bead}/${ws.attempt}`}
    }
    this.log.push(`landed ${ws.bead}`)
    return {landed: true, sha: `sha-${ws.bead}`, commits: [`c-${ws.bead}`]}
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
