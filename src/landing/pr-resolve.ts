/**
 * SPEC 20.4 for an open pull request (SPEC 20.5): the sweep runs outside any
 * attempt, so it gets one narrow port, `PrResolver`, built by the wiring on the
 * run's implementation agent. This file holds that port's shape, the builder, and
 * the verification of a round in the sweep's scratch worktree (the same rules as
 * `repair-check.ts`: no rebase in progress, HEAD on the branch and descending from
 * what it must, no conflict marker in a path that conflicted, leftovers committed).
 */
import {mkdir, open} from 'node:fs/promises'
import {constants} from 'node:fs'
import path from 'node:path'
import type {ResolveBrief, SessionLogLike} from '../agents/types.js'
import type {GitResult} from '../git/run.js'
import type {LoopAgents, LoopTracker} from '../loop/ports.js'
import {firstLine} from '../git/run.js'
import {sanitize} from '../util/sanitize.js'
import {createRepairCheck} from './repair-check.js'

export interface PrResolveRequest {
  bead: string
  /** the scratch worktree, the agent's cwd */
  dir: string
  brief: ResolveBrief
}

/** ran: the agent was called and is healthy (a round may be judged); else why no round was counted */
export type PrResolveOutcome = {ran: true} | {ran: false; why: string}

export type PrResolver = (req: PrResolveRequest) => Promise<PrResolveOutcome>

const nullLog: SessionLogLike = {path: '', lines: 0, event() {}, agentLine() {}, close() {}}

/**
 * The resolve call of the sweep: the run's implementation agent with
 * `HELIX_ACTION=resolve` and the resolve prompt, its spend counted for the bead
 * (14.6; in this mode the tracker port writes it to refs/helix/state). An agent
 * that is unavailable, out of quota or did not start counts no round.
 */
export function createPrResolver(d: {agents: LoopAgents; tracker: Pick<LoopTracker, 'addSpend'>; log: () => SessionLogLike | null; signal?: AbortSignal}): PrResolver {
  return async ({bead, dir, brief}) => {
    const agent = d.agents.impl
    const prompt = await d.agents.prompt('resolve', {beadId: bead, root: dir, repair: brief})
    const res = await d.agents.dispatch({agent, action: 'resolve', prompt, beadId: bead, log: d.log() ?? nullLog, cwd: dir, ...(d.signal ? {signal: d.signal} : {})})
    if (res.tokens > 0 || res.verdict.costUsd > 0) await d.tracker.addSpend(bead, res.tokens, res.verdict.costUsd).catch(() => {})
    const h = res.verdict.health
    if (h.kind === 'unavailable') return {ran: false, why: `the agent ${agent.name} is unavailable (${h.reason})`}
    if (h.kind === 'quota') return {ran: false, why: `the agent ${agent.name} is out of quota (${h.message})`}
    if (res.end === 'spawn-failed') return {ran: false, why: `the agent ${agent.name} did not start (${res.why})`}
    if (res.end === 'aborted') return {ran: false, why: 'the run was interrupted'}
    return {ran: true}
  }
}

type Git = (args: string[], cwd?: string) => Promise<GitResult>

/** commits what the resolve left uncommitted (the tracker excepted), as 15.2 commits leftovers */
async function commitLeftovers(g: Git, dir: string, bead: string, trackerRel: string) {
  await g(['add', '-A'], dir)
  await g(['reset', '-q', '--', trackerRel], dir)
  if ((await g(['diff', '--cached', '--quiet'], dir)).code === 0) return {kind: 'none' as const}
  const c = await g(['commit', '-q', '-m', `helix: uncommitted work of the resolve of ${bead}`], dir)
  return c.code === 0 ? {kind: 'committed' as const} : {kind: 'refused' as const, why: firstLine(c), archive: ''}
}

/** what is still wrong after a resolve round in `dir` on `branch`, or null when done */
export async function verifyPrRound(g: Git, a: {dir: string; bead: string; branch: string; trackerRel: string; onto: string; paths: string[]; kind: 'conflict' | 'check'}): Promise<string | null> {
  const check = createRepairCheck({run: (args, cwd) => g(args, cwd), wtTop: () => a.dir, commitLeftovers: () => commitLeftovers(g, a.dir, a.bead, a.trackerRel)})
  const ws = {bead: a.bead, attempt: 0, slot: 0, dir: a.dir, branch: a.branch, baseTip: a.onto}
  const repair = a.kind === 'conflict' ? {kind: 'conflict' as const, onto: a.onto, paths: a.paths} : {kind: 'check' as const, onto: a.onto, rc: 1, tail: [], logFile: null}
  const bad = await check.verifyRepair(ws, repair)
  if (bad || a.kind === 'conflict') return bad
  const head = (await g(['rev-parse', 'HEAD'], a.dir)).stdout.trim()
  return head === a.onto ? 'the resolve committed no fix' : null
}

/** the failing check's output, sanitized, last 40 lines, in `<dir>/.helix/land-check.log` (never through a link) */
export async function writeCheckLog(dir: string, text: string): Promise<{tail: string[]; file: string | null}> {
  const tail = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => sanitize(l))
    .filter((l) => l.trim())
    .slice(-40)
  const file = path.join(dir, '.helix', 'land-check.log')
  try {
    await mkdir(path.dirname(file), {recursive: true})
    const fh = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644)
    try {
      await fh.writeFile(`${tail.join('\n')}\n`)
    } finally {
      await fh.close()
    }
    return {tail, file}
  } catch {
    return {tail, file: null}
  }
}
