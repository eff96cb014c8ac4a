/**
 * One-shot agent commands (SPEC 8): `helix check|align|backfill|design|polish|review
 * [scope]`. One prompt, one dispatch, one new session log; the agent's condensed
 * output on stdout, helix's own lines on stderr, an exit code that scripts can
 * trust (check: 0 only with a valid NEXT_ACTION; review: 10 on ISSUES_FOUND).
 */
import {existsSync, statSync} from 'node:fs'
import path from 'node:path'
import {openSessionLog} from '../output/session-log.js'
import {EXIT, HelixError} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {healthStopLine} from './health.js'
import {projectPaths} from '../util/root.js'
import {notRegularFile} from '../tracker/store.js'
import {buildPrompt, DEFAULT_REVIEW_SCOPE, DEFAULT_SCOPE} from './prompts.js'
import {defaultEffort, defaultReviewAgent, resolveAgent, resolveAgentOptions, type AgentOptionsInput} from './resolve.js'
import {buildInvocation, dispatchAgent, formatDryRun, timeoutMessage} from './runner.js'
import {BACKFILL_STATUS, BACKFILL_SUCCESS, NEXT_ACTION_CODES, REVIEW_STATUS, trailerInt, trailerValue} from './trailers.js'
import type {ActionName, AgentSpec, DispatchResult} from './types.js'
import {hhmmss} from '../util/time.js'

export type OneShotAction = Exclude<ActionName, 'implementation'>

/** The command word for each action (`helix design` runs the plan action). */
export const ONE_SHOT_COMMANDS: Record<OneShotAction, string> = {
  check: 'check',
  alignment: 'align',
  backfill: 'backfill',
  plan: 'design',
  polish: 'polish',
  review: 'review',
}

export interface OneShotOutput {
  stdout(text: string): void
  stderr(text: string): void
}

export interface OneShotOptions {
  action: OneShotAction
  scope?: string
  agentFlags: AgentOptionsInput
  cwd?: string
  env?: NodeJS.ProcessEnv
  dryRun?: boolean
  out: OneShotOutput
  /** aborting kills the agent (the command wires SIGINT/SIGTERM to it) */
  signal?: AbortSignal
  now?: () => Date
}

const line = (s: string) => (s.endsWith('\n') ? s : s + '\n')

/** Which agent a one-shot action uses: review → explicit agent flag, else the review-agent rule (SPEC 3). */
function pickAgent(opts: OneShotOptions, env: NodeJS.ProcessEnv, cwd: string): {agent: AgentSpec; model?: string; effort?: string; timeoutSec: number} {
  const o = resolveAgentOptions(opts.agentFlags, env, cwd)
  if (opts.action !== 'review') return o
  const f = opts.agentFlags
  if (f.reviewAgent) return {...o, agent: resolveAgent(f.reviewAgent, env, cwd)}
  if (f.agent || f.claude || f.codex) return o
  return {...o, agent: defaultReviewAgent(o.agent, env, cwd)}
}

/** Run one one-shot action; resolves to the process exit code. Bad input throws HelixError. */
export async function runOneShot(opts: OneShotOptions): Promise<number> {
  const env = opts.env ?? process.env
  const cwd = opts.cwd ?? process.cwd()
  const now = opts.now ?? (() => new Date())
  const word = ONE_SHOT_COMMANDS[opts.action]
  if (!word) throw new HelixError(`unknown action '${String(opts.action)}'`, EXIT.ERROR)
  const paths = projectPaths(cwd, env)
  // SPEC 13.2: a tracker that is not a regular file stops every command at once
  if (existsSync(paths.file) && !statSync(paths.file).isFile()) throw notRegularFile(paths.file)
  const scope = opts.scope?.trim() || (opts.action === 'review' ? DEFAULT_REVIEW_SCOPE : DEFAULT_SCOPE)
  const sel = pickAgent(opts, env, cwd)
  const effort = sel.effort ?? defaultEffort(opts.action)
  const prompt = await buildPrompt(opts.action, {root: paths.root, scope, env})

  if (opts.dryRun) {
    const inv = buildInvocation({agent: sel.agent, action: opts.action, prompt, root: paths.root, model: sel.model, effort})
    opts.out.stdout(formatDryRun(inv, prompt, paths.root))
    return EXIT.OK
  }

  const log = openSessionLog(paths.logDir, now())
  let result: DispatchResult
  try {
    log.event(`helix ${word}`, {action: opts.action, scope, agent: sel.agent.name, root: paths.root})
    opts.out.stderr(line(`helix: [${hhmmss(now())}] ${word}: running ${sel.agent.name} (scope ${JSON.stringify(scope)}) — log ${log.path}`))
    result = await dispatchAgent({
      agent: sel.agent,
      action: opts.action,
      prompt,
      root: paths.root,
      model: sel.model,
      effort,
      timeoutSec: sel.timeoutSec,
      log,
      signal: opts.signal,
      onLine: (l) => opts.out.stdout(line(sanitize(l))),
    })
    const range = result.logRange ? `log ${result.logRange.first}–${result.logRange.last} in ${log.path}` : `log ${log.path}`
    opts.out.stderr(line(`helix: [${hhmmss(now())}] ${sel.agent.name} complete (rc=${result.rc}, ${Math.round(result.durationMs / 1000)}s${result.tokensReported === false ? '' : `, ${result.tokens.toLocaleString('en-US')} tokens`}) — ${sanitize(range)}`))
    const code =
      !result.aborted && result.health && result.health.kind !== 'ok'
        ? fail(opts.out, sanitize(healthStopLine(sel.agent.name, result.health, now())), EXIT.AGENT_UNAVAILABLE)
        : judge(opts.action, word, result, paths.root, opts.out, () => timeoutMessage(sel.agent.name, sel.timeoutSec, now()))
    log.event(`helix ${word} exit`, {exit: code, ...(result.health && result.health.kind !== 'ok' ? {health: result.health} : {})})
    return code
  } finally {
    log.close()
  }
}

function fail(out: OneShotOutput, msg: string, code: number = EXIT.ERROR): number {
  out.stderr(line(msg))
  return code
}

function judge(action: OneShotAction, word: string, r: DispatchResult, root: string, out: OneShotOutput, timeoutLine: () => string): number {
  if (r.aborted) return fail(out, `helix: ${word} interrupted`)
  if (r.timedOut) {
    out.stderr(line(timeoutLine()))
    return EXIT.ERROR
  }
  switch (action) {
    case 'check': {
      if (r.rc !== 0) return fail(out, `helix: check failed (agent rc=${r.rc})`)
      const code = trailerValue(r.text, 'NEXT_ACTION', NEXT_ACTION_CODES)
      if (!code) return fail(out, 'helix: unable to determine NEXT_ACTION from check output')
      out.stdout(`NEXT_ACTION: ${code}\n`)
      return EXIT.OK
    }
    case 'review': {
      if (r.rc !== 0) return fail(out, `helix: review failed (agent rc=${r.rc})`)
      const status = trailerValue(r.text, 'REVIEW_STATUS', REVIEW_STATUS)
      if (!status) return fail(out, 'helix: review output missing REVIEW_STATUS trailer')
      if (status === 'CLEAN') {
        out.stderr('helix: review clean\n')
        return EXIT.OK
      }
      const n = trailerInt(r.text, 'ISSUES_COUNT') ?? 0
      const m = trailerInt(r.text, 'FINDINGS_FILED') ?? 0
      out.stderr(`helix: review reported ${n} issue(s), ${m} filed as tracker issues\n`)
      return EXIT.REVIEW_FINDINGS
    }
    case 'backfill': {
      if (r.rc !== 0) return fail(out, `helix: backfill failed (agent rc=${r.rc})`)
      const status = trailerValue(r.text, 'BACKFILL_STATUS', BACKFILL_STATUS)
      if (!status) return fail(out, 'helix: backfill output missing BACKFILL_STATUS trailer')
      if (!BACKFILL_SUCCESS.includes(status as (typeof BACKFILL_SUCCESS)[number])) return fail(out, `helix: backfill failed (BACKFILL_STATUS: ${status})`)
      const report = trailerValue(r.text, 'BACKFILL_REPORT')
      if (!report) return fail(out, 'helix: backfill output missing BACKFILL_REPORT trailer')
      const abs = path.resolve(root, report)
      if (!existsSync(abs) || !statSync(abs).isFile()) return fail(out, `helix: backfill report not found: ${abs}`)
      out.stderr(`helix: backfill ${status.toLowerCase().replace('_', ' ')} — report ${abs}\n`)
      return EXIT.OK
    }
    default: {
      const what = action === 'plan' ? 'design' : action
      if (r.rc !== 0) return fail(out, `helix: ${what} failed (agent rc=${r.rc})`)
      out.stderr(`helix: ${what} complete\n`)
      return EXIT.OK
    }
  }
}
