/**
 * `helix agent check` (docs/agent-protocol.md): run an agent once per HELIX_ACTION
 * against a throw-away project and say, per action, what it answered and what is
 * missing. The same probe, for the review action only and cached by the agent's
 * content, is the review-agent preflight of `doctor` and `run`.
 *
 * The throw-away project lives in a temp dir (git repo + tracker with one claimed
 * bead) and is removed afterwards, whatever happened.
 */
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {spawnSync} from 'node:child_process'
import {initTracker} from '../tracker/admin.js'
import {createBead, isoNow, setFields} from '../tracker/ops.js'
import {readTracker} from '../tracker/store.js'
import {projectPaths} from '../util/root.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {buildPrompt} from './prompts.js'
import {dispatchAgent} from './runner.js'
import {BACKFILL_STATUS, BACKFILL_SUCCESS, NEXT_ACTION_CODES, REVIEW_STATUS, trailerInt, trailerValue} from './trailers.js'
import type {ActionName, AgentSpec, Confine, DispatchResult, ResolveBrief, SessionLogLike} from './types.js'
import {groupDigits} from '../util/numbers.js'

/** Every action helix dispatches, in the order `agent check` runs them. */
export const PROTOCOL_ACTIONS: readonly ActionName[] = ['implementation', 'check', 'review', 'alignment', 'plan', 'polish', 'backfill', 'resolve']

export interface ActionVerdict {
  action: ActionName
  ok: boolean
  /** what the agent answered (trailers, the bead's state) */
  answered: string
  /** what a run needs and did not get; empty when ok */
  missing: string
  /** optional parts it left out (ISSUES_COUNT, TOKENS_USED …); informational */
  notes: string[]
  /** with `verbose`: the agent's output for this action, stdout and stderr as it wrote them (one pipe) */
  output?: string[]
}

export interface ProtocolCheckOptions {
  agent: AgentSpec
  actions?: readonly ActionName[]
  timeoutSec?: number
  env?: NodeJS.ProcessEnv
  /** SPEC 21 `--sandbox`: the probe runs confined like every other agent call */
  confine?: Confine
  /** keep each action's output (stdout and stderr) on its verdict (`agent check --verbose`) */
  verbose?: boolean
  /** an abort (the run's SIGTERM): the agent's group is ended, the throw-away project removed, and the reason thrown */
  signal?: AbortSignal
}

/** At most this many output lines are kept per action (the rest is counted). */
const MAX_OUTPUT_LINES = 200

function git(cwd: string, args: string[]): void {
  spawnSync('git', args, {cwd, stdio: 'ignore', env: {...process.env, GIT_CONFIG_NOSYSTEM: '1'}})
}

/** A throw-away project: git repo with one commit, a tracker holding one bead. */
async function scratchProject(env: NodeJS.ProcessEnv): Promise<{root: string; beadId: string; token: string}> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'helix-agent-check-'))
  try {
    return await fillScratch(root, env)
  } catch (error) {
    rmSync(root, {recursive: true, force: true, maxRetries: 3, retryDelay: 50})
    throw error
  }
}

async function fillScratch(root: string, env: NodeJS.ProcessEnv): Promise<{root: string; beadId: string; token: string}> {
  git(root, ['init', '-q', '-b', 'main'])
  git(root, ['config', 'user.email', 'agent-check@helix.invalid'])
  git(root, ['config', 'user.name', 'helix agent check'])
  writeFileSync(path.join(root, 'README.md'), '# agent check\n\nA throw-away project made by `helix agent check`.\n')
  const scrubbed = {...env, DDX_BEAD_DIR: undefined, HELIX_CLAIM_TOKEN: undefined}
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  const paths = projectPaths(root, scrubbed)
  await initTracker(paths, scrubbed)
  git(root, ['add', '-A'])
  git(root, ['commit', '-q', '-m', 'agent check: scratch project'])
  const bead = await createBead(paths, {title: 'Add a line to README.md', acceptance: 'README.md has one more line'}, scrubbed)
  const token = `agentcheck${Date.now().toString(36)}`
  // claimed the way a run claims it, so the agent's close is fenced by HELIX_CLAIM_TOKEN as in a run
  await setFields(paths, bead.id, {status: 'in_progress', 'claim-token': token, 'claimed-at': isoNow(), owner: 'helix'})
  return {root, beadId: bead.id, token}
}

function gitOut(cwd: string, args: string[]): {code: number; out: string} {
  const r = spawnSync('git', args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: {...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_EDITOR: 'true'}})
  return {code: r.status ?? 1, out: (r.stdout ?? '').trim()}
}

const RESOLVE_BRANCH = 'helix/agent-check-1'

/**
 * SPEC 20.4: a worktree of the scratch project whose rebase stopped on a conflict in
 * README.md (the attempt and the base both changed its first line), as a run leaves it
 * for the resolve action.
 */
function conflictWorktree(root: string): {dir: string; brief: ResolveBrief} {
  const dir = path.join(root, '.helix', 'resolve-check')
  const readme = (at: string, first: string) => writeFileSync(path.join(at, 'README.md'), `${first}\n\nA throw-away project made by \`helix agent check\`.\n`)
  git(root, ['worktree', 'add', '-q', '-b', RESOLVE_BRANCH, dir, 'HEAD'])
  readme(dir, '# agent check: the attempt')
  git(dir, ['commit', '-q', '-am', 'attempt: retitle README'])
  const base = path.join(root, '.helix', 'resolve-base')
  git(root, ['worktree', 'add', '-q', '--detach', base, 'HEAD'])
  readme(base, '# agent check: the base')
  git(base, ['commit', '-q', '-am', 'base: retitle README'])
  const onto = gitOut(base, ['rev-parse', 'HEAD']).out
  git(root, ['update-ref', 'refs/heads/main', onto])
  const commits = gitOut(dir, ['log', '--format=%h %s', `${onto}..HEAD`]).out.split('\n').filter(Boolean)
  git(dir, ['rebase', '-q', onto])
  return {dir, brief: {kind: 'conflict', baseTip: onto, branch: RESOLVE_BRANCH, commits, paths: ['README.md']}}
}

/** what done means for the resolve action, checked the way a run checks it (landing/repair-check.ts) */
function resolveProblem(dir: string, onto: string): string {
  const inProgress = gitOut(dir, ['rev-parse', '--git-path', 'rebase-merge', '--git-path', 'rebase-apply']).out.split('\n')
  if (inProgress.some((p) => p && existsSync(path.resolve(dir, p)))) return 'finishing the rebase (git rebase --continue)'
  if (gitOut(dir, ['symbolic-ref', '-q', 'HEAD']).out !== `refs/heads/${RESOLVE_BRANCH}`) return `HEAD on ${RESOLVE_BRANCH}`
  if (gitOut(dir, ['merge-base', '--is-ancestor', onto, 'HEAD']).code !== 0) return 'HEAD descending from the base tip'
  if (/^(<<<<<<< |=======|>>>>>>> )/m.test(readFileSync(path.join(dir, 'README.md'), 'utf8'))) return 'README.md without conflict markers'
  if (gitOut(dir, ['status', '--porcelain', '--untracked-files=no']).out !== '') return 'everything committed'
  return ''
}

function tokensNote(r: DispatchResult): string[] {
  const notes: string[] = []
  if (r.verdict.tokensReported) notes.push(`${groupDigits(r.tokens)} tokens`)
  if (r.verdict.costUsd) notes.push(`$${r.verdict.costUsd.toFixed(2)}`)
  return notes
}

async function beadStatus(root: string, id: string, env: NodeJS.ProcessEnv): Promise<string> {
  const snap = await readTracker(projectPaths(root, {...env, DDX_BEAD_DIR: undefined}).file)
  return snap.byId.get(id)?.status ?? 'missing'
}

/** Judge one action's output the way the run loop does. */
async function judge(action: ActionName, r: DispatchResult, ctx: {root: string; beadId: string; env: NodeJS.ProcessEnv; resolve?: {dir: string; onto: string}}): Promise<ActionVerdict> {
  const v: ActionVerdict = {action, ok: false, answered: '', missing: '', notes: tokensNote(r)}
  if (r.end === 'timeout') return {...v, answered: 'nothing (timed out)', missing: 'an answer before the timeout'}
  const rc = `rc=${r.rc}`
  switch (action) {
    case 'implementation': {
      const status = await beadStatus(ctx.root, ctx.beadId, ctx.env)
      v.answered = `${rc}, bead ${status}`
      if (r.rc !== 0) v.missing = 'exit 0'
      else if (status !== 'closed') v.missing = 'closing the bead: helix tracker close "$HELIX_BEAD_ID"'
      break
    }
    case 'check': {
      const code = trailerValue(r.text, 'NEXT_ACTION', NEXT_ACTION_CODES)
      v.answered = code ? `${rc}, NEXT_ACTION: ${code}` : rc
      if (!code) v.missing = `NEXT_ACTION: <${NEXT_ACTION_CODES.join('|')}>`
      break
    }
    case 'review': {
      const status = trailerValue(r.text, 'REVIEW_STATUS', REVIEW_STATUS)
      v.answered = status ? `${rc}, REVIEW_STATUS: ${status}` : rc
      if (!status) v.missing = 'REVIEW_STATUS: CLEAN|ISSUES_FOUND'
      for (const k of ['ISSUES_COUNT', 'FINDINGS_FILED']) if (trailerInt(r.text, k) === undefined) v.notes.push(`no ${k} (counts as 0)`)
      break
    }
    case 'backfill': {
      const status = trailerValue(r.text, 'BACKFILL_STATUS', BACKFILL_STATUS)
      const report = trailerValue(r.text, 'BACKFILL_REPORT')
      const reportOk = report !== undefined && existsSync(path.resolve(ctx.root, report))
      v.answered = [rc, status && `BACKFILL_STATUS: ${status}`, report && `BACKFILL_REPORT: ${report}${reportOk ? '' : ' (no such file)'}`].filter(Boolean).join(', ')
      if (!status || !BACKFILL_SUCCESS.includes(status as (typeof BACKFILL_SUCCESS)[number])) v.missing = 'BACKFILL_STATUS: COMPLETE|PARTIAL|NO_CHANGES'
      else if (!reportOk) v.missing = 'BACKFILL_REPORT: <an existing file>'
      break
    }
    case 'resolve': {
      const problem = r.rc === 0 && ctx.resolve ? resolveProblem(ctx.resolve.dir, ctx.resolve.onto) : ''
      v.answered = r.rc === 0 && !problem ? `${rc}, rebase finished, no conflict markers` : rc
      v.missing = r.rc !== 0 ? 'exit 0' : problem
      break
    }
    default: // alignment, plan, polish: judged by what they do to the tracker; exit 0 is the contract
      v.answered = rc
      if (r.rc !== 0) v.missing = 'exit 0'
  }
  v.ok = v.missing === ''
  return v
}

/** A session log that counts its lines and, when `keep` is given, keeps the agent's output lines in it. */
function countingLog(file: string, keep?: {lines: string[]; dropped: number}): SessionLogLike {
  let lines = 0
  return {
    path: file,
    get lines() {
      return lines
    },
    event: () => void lines++,
    agentLine: (line: string) => {
      lines++
      if (!keep) return
      if (keep.lines.length < MAX_OUTPUT_LINES) keep.lines.push(line)
      else keep.dropped++
    },
    close: () => undefined,
  }
}

/** Run the agent once per action in a throw-away project (removed afterwards). */
export async function checkAgentProtocol(opts: ProtocolCheckOptions): Promise<ActionVerdict[]> {
  const env = opts.env ?? process.env
  const actions = opts.actions ?? PROTOCOL_ACTIONS
  const scratch = await scratchProject(env)
  const agentEnv: Record<string, string> = {HELIX_AGENT_CHECK: '1'}
  try {
    // the scratch project and its output go away with the check: the output is only counted, not kept
    const kept = opts.verbose ? {lines: [] as string[], dropped: 0} : undefined
    const log = countingLog(path.join(scratch.root, '.helix-logs', 'agent-check.log'), kept)
    const verdicts: ActionVerdict[] = []
    try {
      for (const action of actions) {
        if (opts.signal?.aborted) break
        if (kept) {
          kept.lines = []
          kept.dropped = 0
        }
        const output = (): {output?: string[]} => (kept ? {output: kept.dropped ? [...kept.lines, `… and ${kept.dropped} more lines`] : [...kept.lines]} : {})
        const conflict = action === 'resolve' ? conflictWorktree(scratch.root) : null
        const prompt = await buildPrompt(action, {root: conflict?.dir ?? scratch.root, beadId: scratch.beadId, scope: action === 'review' ? 'last-commit' : 'repo', env, contextMd: '', ...(conflict ? {repair: conflict.brief} : {})})
        let r: DispatchResult
        try {
          r = await dispatchAgent({
            agent: opts.agent,
            action,
            prompt,
            root: scratch.root,
            ...(conflict ? {cwd: conflict.dir} : {}),
            timeoutSec: opts.timeoutSec ?? 60,
            beadId: action === 'implementation' || action === 'resolve' ? scratch.beadId : undefined,
            claimToken: action === 'implementation' ? scratch.token : undefined,
            env: agentEnv,
            log,
            ...(opts.confine ? {confine: opts.confine} : {}),
            signal: opts.signal,
          })
        } catch (error) {
          verdicts.push({action, ok: false, answered: 'nothing', missing: `a run (${errorMessage(error)})`, notes: [], ...output()})
          continue
        }
        verdicts.push({...(await judge(action, r, {root: scratch.root, beadId: scratch.beadId, env, ...(conflict ? {resolve: {dir: conflict.dir, onto: conflict.brief.baseTip}} : {})})), ...output()})
      }
    } finally {
      log.close()
    }
    // interrupted: no verdict (an agent cut short answered nothing); the finally below removes the project
    opts.signal?.throwIfAborted()
    return verdicts
  } finally {
    rmSync(scratch.root, {recursive: true, force: true, maxRetries: 3, retryDelay: 50})
  }
}

/** One line per action: `  review          ok       rc=0, REVIEW_STATUS: CLEAN` / `MISSING  … — needs …`. */
export function renderVerdicts(agentName: string, verdicts: readonly ActionVerdict[]): string {
  const lines = [`agent ${agentName}:`]
  for (const v of verdicts) {
    const extra = v.notes.length > 0 ? ` (${v.notes.join(', ')})` : ''
    lines.push(`  ${v.action.padEnd(15)}${(v.ok ? 'ok' : 'MISSING').padEnd(9)}${v.answered}${v.ok ? '' : ` — needs ${v.missing}`}${extra}`)
    // --verbose: what the agent wrote (stdout and stderr, one pipe), each line sanitized and marked as the agent's
    if (v.output) lines.push(...(v.output.length ? v.output.map((l) => `      | ${sanitize(l)}`) : ['      | (no output)']))
  }
  const bad = verdicts.filter((v) => !v.ok).length
  lines.push(bad === 0 ? `all ${verdicts.length} actions answered` : `${bad} of ${verdicts.length} actions missing what a run needs (see docs/agent-protocol.md)`)
  return lines.join('\n') + '\n'
}

// ----------------------------------------------------------- review preflight

/** The agent file's content hash: the cache key of the review probe. Null when unreadable. */
function contentKey(file: string): string | null {
  try {
    const st = statSync(file)
    if (!st.isFile() || st.size > 4 * 1024 * 1024) return null
    return createHash('sha256').update(readFileSync(file)).digest('hex')
  } catch {
    return null
  }
}

export interface ReviewPreflight {
  ok: boolean
  /** how it was decided: codex/claude are prompt-driven; 'cached' / 'probed' ran the agent (now or before) */
  how: 'builtin' | 'cached' | 'probed' | 'skipped'
  detail: string
}

/**
 * Can this agent answer a review (print REVIEW_STATUS)? codex and claude answer from the
 * prompt. A command agent is run once on a review prompt in a throw-away project; the
 * answer is cached in `<cacheDir>/agent-check.json` by the agent file's sha256, so it
 * runs again only when the script changes. HELIX_AGENT_PREFLIGHT=0 skips it.
 */
export async function reviewPreflight(agent: AgentSpec, cacheDir: string, env: NodeJS.ProcessEnv = process.env, confine?: Confine, signal?: AbortSignal): Promise<ReviewPreflight> {
  if (agent.kind !== 'command') return {ok: true, how: 'builtin', detail: `${agent.kind} answers reviews from the prompt`}
  if (['0', 'false', 'no', 'off'].includes((env.HELIX_AGENT_PREFLIGHT ?? '').trim().toLowerCase())) {
    return {ok: true, how: 'skipped', detail: 'review probe skipped (HELIX_AGENT_PREFLIGHT=0)'}
  }
  const key = contentKey(agent.path)
  const cacheFile = path.join(cacheDir, 'agent-check.json')
  let cache: Record<string, {ok: boolean; detail: string}> = {}
  try {
    cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as typeof cache
  } catch {
    cache = {}
  }
  if (key && cache[key]) return {...cache[key], how: 'cached'}
  const [v] = await checkAgentProtocol({agent, actions: ['review'], timeoutSec: 60, env, ...(confine ? {confine} : {}), signal})
  const result = {ok: v.ok, detail: v.ok ? `answers reviews (${v.answered})` : `gave no REVIEW_STATUS trailer to a review prompt (${v.answered})`}
  if (key) {
    try {
      mkdirSync(cacheDir, {recursive: true})
      writeFileSync(cacheFile, JSON.stringify({...cache, [key]: result}, null, 2) + '\n')
    } catch {
      // no cache: the probe runs again next time, nothing else changes
    }
  }
  return {...result, how: 'probed'}
}
