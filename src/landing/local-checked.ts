/**
 * SPEC 20.3 for the local landing, split from local.ts: the land check on a
 * candidate in its worktree, and the rounds around the land lock. Checks run outside
 * the lock (slots check in parallel); under it the base moves only when it is still
 * the tip the candidate was checked on, else the candidate is rebased and checked
 * again; after 3 such rounds the check runs under the lock, so the candidate lands.
 */
import {realpathSync} from 'node:fs'
import type {LandOptions, Workspace} from '../loop/ports.js'
import type {GitResult} from '../git/run.js'
import {sanitize} from '../util/sanitize.js'
import {refused, type Landed, type Moved, type NeedsRepair, type Refused} from './land-base.js'
import {candidateAfter, candidateBefore} from './check-guard.js'
import {runLandCheck, writeCheckLog, type LandCheckSpec} from './land-check.js'

const CHECK_ROUNDS_OUTSIDE_LOCK = 3
export type CheckRefused = Refused & {checkTail?: string[]}

export interface LandCheckedDeps {
  root: string
  env: NodeJS.ProcessEnv
  spec: () => Omit<LandCheckSpec, 'env'>
  run: (args: string[], cwd: string) => Promise<GitResult>
  wtTop: (ws: {bead: string; attempt: number}) => string
  base: () => Promise<string>
  baseTip: () => Promise<string>
  rebaseOnto: (top: string, onto: string, keep?: boolean) => Promise<Refused | NeedsRepair | null>
  landLocked: (ws: Workspace, rebasedOnto: string, checked?: boolean, keep?: boolean) => Promise<Landed | Refused | Moved | NeedsRepair>
  underLandLock: <T>(fn: () => Promise<T>) => Promise<T>
}

export function createLandChecked(d: LandCheckedDeps) {
  const {run, wtTop, base, baseTip, rebaseOnto, landLocked, underLandLock} = d
  let projectReal: string | null = null

  /** the land check on the candidate rebased onto `onto`; null when it passed */
  async function check(ws: Workspace, onto: string, o: LandOptions): Promise<CheckRefused | NeedsRepair | null> {
    const spec = d.spec()
    projectReal ??= realpathSync(d.root)
    const env = {HELIX_BEAD_ID: ws.bead, HELIX_ATTEMPT: String(o.attemptNo ?? ws.attempt), HELIX_LAND_BASE: onto, HELIX_PROJECT: projectReal}
    const top = wtTop(ws)
    const before = await candidateBefore(run, top)
    const c = await runLandCheck({...spec, env: d.env}, ws.dir, env)
    o.onCheck?.({passed: c.rc === 0 && !c.ended, rc: c.rc, ms: c.ms, tail: c.tail, onto, ...(c.ended ? {ended: c.ended} : {})})
    // what lands is the candidate the check ran on, never what the check made of it
    const moved = await candidateAfter(run, top, before)
    if (moved) return {...refused(moved), checkTail: c.tail}
    if (c.rc === 0 && !c.ended) return null
    const why = c.ended === 'timeout' ? `land check timed out after ${spec.timeoutSec}s` : c.ended === 'stall' ? `land check stalled: no output for ${spec.stallSec}s` : `land check failed (rc=${c.rc})`
    if (o.repair) return {landed: false, reason: why, preservedRef: null, repair: {kind: 'check', onto, rc: c.rc, tail: c.tail, logFile: await writeCheckLog(ws.dir, c.output)}}
    return {...refused(why), checkTail: c.tail}
  }

  /** check, and land under the lock when the base is still the tip checked against (the rounds above) */
  async function landChecked(ws: Workspace, onto: string, o: LandOptions): Promise<Landed | CheckRefused | NeedsRepair> {
    const top = wtTop(ws)
    for (let round = 0; round < CHECK_ROUNDS_OUTSIDE_LOCK; round++) {
      const bad = await check(ws, onto, o)
      if (bad) return bad
      const r = await underLandLock(() => landLocked(ws, onto, true))
      if (!('moved' in r)) return r
      const cur = await baseTip()
      const rb = await rebaseOnto(top, cur, o.repair === true)
      if (rb) return rb
      onto = cur
    }
    return underLandLock(async () => {
      const cur = await baseTip()
      const rb = cur === onto ? null : await rebaseOnto(top, cur, o.repair === true)
      if (rb) return rb
      const bad = await check(ws, cur, o)
      if (bad) return bad
      const r = await landLocked(ws, cur, true)
      return 'moved' in r ? refused(`${sanitize(await base())} moved under the land lock during the land check: something outside helix commits to it; land when it stops`) : r
    })
  }

  return {landChecked}
}
