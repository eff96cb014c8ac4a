/**
 * The real effects behind the loop's ports: the tracker store and ops, the agent
 * runner and prompts, git (read-only, argv only), the pid mutex, run-state, the
 * session log, context.md and the blocker report. The oclif commands call
 * `realLoopDeps` and hand the result to `runLoop`.
 */
import os from 'node:os'
import path from 'node:path'
import {git} from '../git/run.js'
import {sanitize} from '../util/sanitize.js'
import {formatDryRun, buildInvocation} from '../agents/invocation.js'
import {dispatchAgent} from '../agents/runner.js'
import {buildPrompt} from '../agents/prompts.js'
import {blameConfigFile} from '../config/project-config.js'
import {defaultReviewAgent, parseTimeout, resolveAgent, resolveAgentOptions, type AgentOptionsInput} from '../agents/resolve.js'
import type {AgentSpec} from '../agents/types.js'
import {loadSessionLogger, openSessionLog} from '../output/session-log.js'
import {createTerminal} from '../output/terminal.js'
import {readAgentsMd, renderContext, writeContextFile} from '../output/context.js'
import {writeBlockerReport} from '../output/blockers.js'
import {recoverOrphans} from '../recovery/orphans.js'
import {currentStartToken, realProbe} from '../proc/process-probe.js'
import {acquirePidFile, releasePidFile} from '../state/pidfile.js'
import {readRunState, updateRunState, writeRunState} from '../state/run-state.js'
import {staleClaimIds, orphanThresholdSec} from '../tracker/liveness.js'
import {addLabel, appendNote, claimBead, closeBead, createBead, reopenBead, setFields, unclaimBead} from '../tracker/ops.js'
import {addSpend} from '../tracker/add-spend.js'
import {readTracker} from '../tracker/store.js'
import {lockTimeoutSec, OUTLAST_STALE_LOCK_SEC} from '../tracker/lock.js'
import {ClaimConflictError} from '../util/errors.js'
import {abortableSleep} from '../util/abort.js'
import {projectPaths, type ProjectPaths} from '../util/root.js'
import type {LoopDeps} from '../loop/ports.js'
import {gitGates} from './git-gates.js'
import type {GitLandingOptions} from '../landing/local.js'
import {appendRunHistory} from '../state/runs-log.js'
import {ensureIgnored, gitignorePath} from '../util/runtime-paths.js'

export interface WiringInput {
  cwd: string
  env: NodeJS.ProcessEnv
  agent: AgentOptionsInput
  reviewAgent?: string
  summary: boolean
  quiet: boolean
  /** helix's own interrupt (SIGINT/SIGTERM): kills a running acceptance script */
  signal?: AbortSignal
}


export {gitGates}

export interface RealLoop {
  deps: LoopDeps
  paths: ProjectPaths
  timeoutSec: number
}

/**
 * Build the real dependencies. Agent names are resolved lazily (in `agents.check`,
 * after the mutex is held: SPEC 5.1 step 2); everything heavy is imported by the
 * modules that need it, when they need it.
 */
export function realLoopDeps(input: WiringInput): RealLoop {
  const {cwd, env} = input
  const paths = projectPaths(cwd, env)
  const root = paths.root
  const probe = realProbe()
  const threshold = orphanThresholdSec(env)
  const owner = env.HELIX_OWNER?.trim() || 'helix'
  const out = createTerminal({summary: input.summary, quiet: input.quiet})
  let logRef: {event: (m: string, f?: Record<string, unknown>) => void} | null = null
  const named = input.agent.claude ? 'claude' : input.agent.codex ? 'codex' : input.agent.agent ?? env.HELIX_AGENT ?? 'codex'
  // until check() resolves it (and for --dry-run without the agent installed): path '' means not found
  const placeholder: AgentSpec = {kind: named === 'codex' || named === 'claude' ? named : 'command', name: named, path: ''}
  let model: string | undefined
  let effort: string | undefined
  // a bad --timeout / HELIX_AGENT_TIMEOUT is bad input: refuse before anything else happens
  const timeoutSec = parseTimeout(input.agent.timeout ?? env.HELIX_AGENT_TIMEOUT, input.agent.timeout !== undefined ? '--timeout' : 'HELIX_AGENT_TIMEOUT')
  const deps: LoopDeps = {
    tracker: {
      read: () => readTracker(paths.file),
      staleClaims: (snap) => staleClaimIds(snap, probe, new Date(), threshold),
      async claim(id) {
        try {
          const b = await claimBead(paths, id, {owner, pid: process.pid, machine: os.hostname(), startToken: currentStartToken(), probe, thresholdSec: threshold})
          return {ok: true, token: String(b['claim-token'])}
        } catch (error) {
          if (error instanceof ClaimConflictError) return {ok: false, message: error.message}
          throw error
        }
      },
      async unclaim(id) {
        await unclaimBead(paths, id)
      },
      async close(id) {
        await closeBead(paths, id)
      },
      async reopen(id, reason) {
        // an attempt that did not land undoes its close (SPEC 18.1a): wait out a dead writer's lock
        await reopenBead(paths, id, reason, {lockWaitSec: Math.max(lockTimeoutSec(), OUTLAST_STALE_LOCK_SEC)})
      },
      async appendNote(id, text) {
        await appendNote(paths, id, text, {once: true})
      },
      async addLabel(id, label) {
        await addLabel(paths, id, label)
      },
      async setFields(id, fields) {
        await setFields(paths, id, fields)
      },
      async addSpend(id, tokens, costUsd) {
        await addSpend(paths, id, tokens, costUsd)
      },
      async create(i) {
        const b = await createBead(
          paths,
          {title: i.title, type: i.issue_type, priority: i.priority, labels: i.labels, acceptance: i.acceptance, description: i.description, specId: i['spec-id']},
          env,
        )
        return b.id
      },
    },
    agents: {
      impl: placeholder,
      review: placeholder,
      check() {
        let opts: ReturnType<typeof resolveAgentOptions>
        let review: AgentSpec
        try {
          opts = resolveAgentOptions({...input.agent, timeout: timeoutSec}, env, cwd)
          review = input.reviewAgent ? resolveAgent(input.reviewAgent, env, cwd) : defaultReviewAgent(opts.agent, env, cwd)
        } catch (error) {
          // a missing agent that .helix/config.json named says so; `process.env` is before the file filled it
          const typed = {agent: input.agent.agent !== undefined || input.agent.claude === true || input.agent.codex === true, reviewAgent: input.reviewAgent !== undefined}
          throw blameConfigFile(error, cwd, process.env, typed)
        }
        const impl = opts.agent
        model = opts.model
        effort = opts.effort
        deps.agents.impl = impl
        deps.agents.review = review
      },
      prompt: (action, ctx) => buildPrompt(action, {root, env, ...ctx}),
      dispatch: (a) =>
        dispatchAgent({
          agent: a.agent,
          action: a.action,
          prompt: a.prompt,
          root,
          // a model name belongs to one agent family: never hand codex's model to a claude reviewer
          ...(model && a.agent.kind === deps.agents.impl.kind ? {model} : {}),
          ...(effort ? {effort} : {}),
          timeoutSec,
          ...(a.beadId ? {beadId: a.beadId} : {}),
          ...(a.claimToken ? {claimToken: a.claimToken} : {}),
          log: a.log,
          ...(a.onLine ? {onLine: a.onLine} : {}),
          ...(a.signal ? {signal: a.signal} : {}),
          ...(a.cwd ? {cwd: a.cwd} : {}),
          ...(a.env ? {env: a.env} : {}),
          ...(a.stallTimeoutSec ? {stallTimeoutSec: a.stallTimeoutSec} : {}),
          ...(a.slot !== undefined ? {slot: a.slot} : {}),
          ...(a.onSpawn ? {onSpawn: a.onSpawn} : {}),
          ...(a.confine ? {confine: a.confine} : {}),
        }),
      describe(agent, action, prompt) {
        // SPEC 16.6: --dry-run works with no agent installed and says so
        const missing = agent.path === ''
        const spec = missing ? {...agent, path: agent.name} : agent
        const text = formatDryRun(buildInvocation({agent: spec, action, prompt, root, ...(model ? {model} : {}), ...(effort ? {effort} : {})}), prompt, root).replace(
          /\n--- prompt ---[\s\S]*$/,
          '',
        )
        return missing ? text.replace(/^(command: .*)$/m, '$1  (not found on PATH)') : text
      },
    },
    out,
    gates: gitGates(root, (m, f) => logRef?.event(m, f), {timeoutSec, ...(input.signal ? {signal: input.signal} : {})}),
    mutex: {
      acquire() {
        const r = acquirePidFile(paths.pidFile, process.pid)
        return r.ok ? {ok: true} : {ok: false, holder: r.holder}
      },
      release() {
        releasePidFile(paths.pidFile, process.pid)
      },
    },
    state: {
      load: () => readRunState(paths.runState),
      save: (s) => writeRunState(paths.runState, s),
      update: (fn) => updateRunState(paths.runState, fn),
    },
    clock: {now: () => new Date()},
    sleep: abortableSleep,
    async openLog() {
      await loadSessionLogger()
      const log = openSessionLog(paths.logDir)
      logRef = log
      return log
    },
    async recoverOrphans(say) {
      // this run's own beads in flight are not orphans: not reclaimed, and not reported as "too fresh"
      const r = await recoverOrphans(paths, {owner, probe, thresholdSec: threshold, say, ownPid: process.pid})
      return {recovered: r.recovered}
    },
    async context(snap, focusedEpic, write) {
      const stale = await staleClaimIds(snap, probe, new Date(), threshold)
      const text = renderContext({
        root,
        trackerFile: paths.file,
        snap,
        staleClaims: stale,
        focusedEpic: focusedEpic ? (snap.byId.get(focusedEpic) ?? null) : null,
        agentsMd: await readAgentsMd(root),
      })
      if (write) await writeContextFile(paths.contextFile, text)
      return text
    },
    async blockerReport(a) {
      return writeBlockerReport(paths.logDir, a)
    },
    history: {
      async append(record) {
        appendRunHistory(paths.logDir, record)
      },
    },
    // the run's claims, notes and closes leave `.ddx/beads.jsonl` modified in the checkout; say so
    async trackerFileNote() {
      const rel = path.relative(root, paths.file)
      if (rel.startsWith('..') || path.isAbsolute(rel)) return null
      const st = await git(['status', '--porcelain', '--', rel], {cwd: root, env})
      if (st.code !== 0 || st.stdout.trim() === '') return null
      const f = sanitize(rel)
      return `helix: ${f} has this run's tracker changes, not committed; commit them with your work (git add ${f} && git commit -m 'tracker')`
    },
    ignoreRuntime: () => ensureIgnored(gitignorePath(root)),
    trackerDir: paths.dir,
    pid: process.pid,
    env,
  }
  return {deps, paths, timeoutSec}
}

/** SPEC 15: the git landing for `--workers` > 1 (loaded only when a run uses workers). */
export async function attachLanding(real: RealLoop, env: NodeJS.ProcessEnv, keepPreservedDays?: number, landCheck?: GitLandingOptions['landCheck'], known?: GitLandingOptions['known']): Promise<void> {
  const {createGitLanding} = await import('../landing/local.js')
  const {deps, paths} = real
  deps.landing = createGitLanding({root: paths.root, trackerDir: paths.dir, env, now: () => new Date(), log: (line) => deps.out.normal(line), cleanupInBackground: true, known, ...(landCheck ? {landCheck} : {})})
  if (keepPreservedDays !== undefined) {
    // preserved refs of beads that landed since go after --keep-preserved days
    const {prunePreserved} = await import('../recovery/reconcile-checks.js')
    deps.landing.prunePreserved = async (say) => {
      await prunePreserved(paths, {env, keepDays: keepPreservedDays, all: false, dryRun: false, say: () => {}}).then((refs) => refs.length > 0 && say(`helix: pruned ${refs.length} preserved ref(s) of beads that landed more than ${keepPreservedDays} day(s) ago`))
    }
  }
}
