/**
 * One-shot agent commands (SPEC 8): `helix check|align|backfill|design|polish|review
 * [scope]`. One prompt, one dispatch, one new session log; the agent's condensed
 * output on stdout, helix's own lines on stderr, an exit code that scripts can
 * trust (check: 0 only with a valid NEXT_ACTION; review: 10 on ISSUES_FOUND).
 */
import {existsSync, statSync} from 'node:fs'
import path from 'node:path'
import {EXIT, HelixError} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {healthStopLine} from './self-report.js'
import {projectPaths} from '../util/root.js'
import {notRegularFile} from '../tracker/store.js'
import {buildPrompt, DEFAULT_REVIEW_SCOPE, DEFAULT_SCOPE} from './prompts.js'
import {defaultEffort, defaultReviewAgent, resolveAgent, resolveAgentOptions, type AgentOptionsInput} from './resolve.js'
import {buildInvocation, formatDryRun} from './invocation.js'
import {actionWord, judgeAction, stallMessage, timeoutMessage} from './judge.js'
import {dispatchAgent} from './runner.js'
import type {ActionName, AgentSpec, DispatchResult, SessionLogLike} from './types.js'
import {hhmmss} from '../util/time.js'
import {groupDigits} from '../util/numbers.js'

export type OneShotAction = Exclude<ActionName, 'implementation' | 'resolve'>

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
  /** opens the invocation's session log in `logDir` (the caller wires the real one, src/output/session-log.ts) */
  openLog: (logDir: string, at: Date) => Promise<SessionLogLike>
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

  // SPEC 21 in a sandboxed project (config sandbox: true, HELIX_SANDBOX): the agent runs confined
  const confine = (await import('./oneshot-confine.js')).oneShotConfine(opts.action, paths.root, env)
  const log = await opts.openLog(paths.logDir, now())
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
      ...(confine ? {confine} : {}),
    })
    // the same `log LA–LB` pointer the loop prints (docs/agents.md); `helix logs --lines LA–LB` takes it as is
    const range = result.logRange ? `log L${result.logRange.first}–L${result.logRange.last} in ${log.path}` : `log ${log.path}`
    opts.out.stderr(line(`helix: [${hhmmss(now())}] ${sel.agent.name} complete (rc=${result.rc}, ${Math.round(result.durationMs / 1000)}s${!result.verdict.tokensReported ? '' : `, ${groupDigits(result.tokens)} tokens`}) — ${sanitize(range)}`))
    const code = report(opts.action, word, result, paths.root, opts.out, sel.agent.name, now, () => timeoutMessage(sel.agent.name, sel.timeoutSec, now()))
    const health = result.verdict.health
    log.event(`helix ${word} exit`, {exit: code, ...(health.kind !== 'ok' ? {health} : {})})
    return code
  } finally {
    log.close()
  }
}

function fail(out: OneShotOutput, msg: string, code: number = EXIT.ERROR): number {
  out.stderr(line(msg))
  return code
}

/** The one-shot's lines for the one judgement of its agent call (agents/judge.ts). */
function report(action: OneShotAction, word: string, r: DispatchResult, root: string, out: OneShotOutput, agentName: string, now: () => Date, timeoutLine: () => string): number {
  const j = judgeAction(action, r)
  switch (j.kind) {
    case 'interrupted':
      return fail(out, `helix: ${word} interrupted`)
    case 'unhealthy':
      return fail(out, sanitize(healthStopLine(agentName, j.health, now())), EXIT.AGENT_UNAVAILABLE)
    case 'timeout':
      out.stderr(line(timeoutLine()))
      return EXIT.ERROR
    case 'stalled':
      return fail(out, `helix: [${hhmmss(now())}] ${agentName} ${stallMessage(j.afterSec)} — killed`)
    case 'failed':
    case 'unreadable':
      return fail(out, `helix: ${j.message}`)
    case 'done':
      break
    default:
      return assertNever(j)
  }
  const done = j.done
  switch (done.action) {
    case 'check':
      out.stdout(`NEXT_ACTION: ${done.next}\n`)
      return EXIT.OK
    case 'review':
      if (done.status === 'CLEAN') {
        out.stderr('helix: review clean\n')
        return EXIT.OK
      }
      out.stderr(`helix: review reported ${done.count} issue(s), ${done.filed} filed as tracker issues\n`)
      return EXIT.REVIEW_FINDINGS
    case 'backfill': {
      const abs = path.resolve(root, done.report)
      if (!existsSync(abs) || !statSync(abs).isFile()) return fail(out, `helix: backfill report not found: ${abs}`)
      out.stderr(`helix: backfill ${done.status.toLowerCase().replace('_', ' ')} — report ${abs}\n`)
      return EXIT.OK
    }
    default:
      out.stderr(`helix: ${actionWord(done.action)} complete\n`)
      return EXIT.OK
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected ${JSON.stringify(x)}`)
}
