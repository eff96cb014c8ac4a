/**
 * The real effects behind the loop's ports: the tracker store and ops, the agent
 * runner and prompts, git (read-only, argv only), the pid mutex, run-state, the
 * session log, context.md and the blocker report. The oclif commands call
 * `realLoopDeps` and hand the result to `runLoop`.
 */
import {execFile, spawn} from 'node:child_process'
import {access, readdir, stat} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {formatDryRun, buildInvocation, dispatchAgent} from '../agents/runner.js'
import {buildPrompt} from '../agents/prompts.js'
import {defaultReviewAgent, parseTimeout, resolveAgent, resolveAgentOptions, type AgentOptionsInput} from '../agents/resolve.js'
import type {AgentSpec} from '../agents/types.js'
import {openSessionLog} from '../output/session-log.js'
import {createTerminal} from '../output/terminal.js'
import {readAgentsMd, renderContext, writeContextFile} from '../output/context.js'
import {writeBlockerReport} from '../output/blockers.js'
import {recoverOrphans} from '../recovery/orphans.js'
import {currentStartToken, realProbe} from '../recovery/probe.js'
import {acquirePidFile, releasePidFile} from '../state/pidfile.js'
import {readRunState, writeRunState} from '../state/run-state.js'
import {staleClaimIds, orphanThresholdSec} from '../tracker/liveness.js'
import {addLabel, appendNote, claimBead, closeBead, createBead, reopenBead, setFields, unclaimBead} from '../tracker/ops.js'
import {readTracker} from '../tracker/store.js'
import {HelixError} from '../util/errors.js'
import {projectPaths, type ProjectPaths} from '../util/root.js'
import type {LoopDeps, LoopGates} from './ports.js'
import {isExecutableFile} from '../util/files.js'

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

function run(file: string, args: string[], cwd: string): Promise<{code: number; stdout: string}> {
  return new Promise((resolve) => {
    execFile(file, args, {cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024}, (error, stdout) => {
      const code = error ? (typeof (error as {code?: unknown}).code === 'number' ? ((error as {code: number}).code) : 1) : 0
      resolve({code, stdout: stdout ?? ''})
    })
  })
}

/** git's empty tree: the diff base of a repository without commits */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'
/** helix's own bookkeeping is not "the change" the review threshold measures */
const OWN_PATHS = ['.ddx/', '.helix/', '.helix-logs/']

function ownPath(p: string): boolean {
  return OWN_PATHS.some((o) => p.startsWith(o))
}

interface WorktreeState {
  /** tracked files differing from the mark: numstat counts and a stat signature */
  tracked: Map<string, {added: number; deleted: number; stat: string}>
  /** untracked, non-ignored files: line count and a stat signature */
  untracked: Map<string, {lines: number; stat: string}>
}

async function statOf(file: string): Promise<{sig: string; size: number}> {
  try {
    const st = await stat(file)
    return {sig: `${st.size}:${st.mtimeMs}`, size: st.size}
  } catch {
    return {sig: 'missing', size: 0}
  }
}

/** untracked files larger than this count as a file only (their lines are not read) */
const MAX_COUNTED_BYTES = 8 * 1024 * 1024

/** The worktree against `mark` (read-only git), minus helix's own paths; null when git fails. */
async function worktreeState(root: string, mark: string): Promise<WorktreeState | null> {
  const diff = await run('git', ['diff', '--numstat', mark, '--'], root)
  if (diff.code !== 0) return null
  const tracked: WorktreeState['tracked'] = new Map()
  for (const row of diff.stdout.split('\n')) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/.exec(row)
    if (!m || ownPath(m[3])) continue
    tracked.set(m[3], {
      added: m[1] === '-' ? 0 : Number(m[1]),
      deleted: m[2] === '-' ? 0 : Number(m[2]),
      stat: (await statOf(path.join(root, m[3]))).sig,
    })
  }
  const untracked: WorktreeState['untracked'] = new Map()
  const others = await run('git', ['ls-files', '--others', '--exclude-standard', '-z'], root)
  if (others.code === 0) {
    const {readFile} = await import('node:fs/promises')
    for (const f of others.stdout.split('\0')) {
      if (!f || ownPath(f) || tracked.has(f)) continue
      const st = await statOf(path.join(root, f))
      let lines = 0
      if (st.size <= MAX_COUNTED_BYTES) {
        try {
          const text = await readFile(path.join(root, f), 'utf8')
          lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
        } catch {
          // unreadable: counts as a file only
        }
      }
      untracked.set(f, {lines, stat: st.sig})
    }
  }
  return {tracked, untracked}
}

export function gitGates(
  root: string,
  onLog: (msg: string, fields: Record<string, unknown>) => void,
  limits: {timeoutSec: number; signal?: AbortSignal} = {timeoutSec: 2700},
): LoopGates {
  let baseline: {mark: string; state: WorktreeState | null} | null = null
  return {
    async acceptanceScripts() {
      const dir = path.join(root, 'scripts')
      let names: string[]
      try {
        names = await readdir(dir)
      } catch {
        return []
      }
      // a script that is not executable is not part of the gate
      return names
        .filter((x) => /^check-acceptance-.*\.sh$/.test(x))
        .sort()
        .map((n) => path.join(dir, n))
        .filter(isExecutableFile)
    },
    runScript(file) {
      return new Promise((resolve) => {
        // own process group, bounded by the agent timeout, killed on helix's own SIGINT/SIGTERM:
        // a hanging acceptance script must not wedge the run
        const child = spawn(file, [], {cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true})
        const killGroup = () => {
          try {
            if (child.pid) process.kill(-child.pid, 'SIGKILL')
          } catch {
            // already gone
          }
        }
        const timer = setTimeout(() => {
          onLog('acceptance script timed out', {script: file, timeout_sec: limits.timeoutSec})
          killGroup()
        }, Math.min(limits.timeoutSec * 1000, 2 ** 31 - 1))
        limits.signal?.addEventListener('abort', killGroup, {once: true})
        let output = ''
        const take = (d: Buffer) => {
          if (output.length < 64 * 1024) output += d.toString('utf8')
        }
        child.stdout.on('data', take)
        child.stderr.on('data', take)
        child.on('error', () => {
          clearTimeout(timer)
          resolve(127)
        })
        child.on('close', (code, signal) => {
          clearTimeout(timer)
          limits.signal?.removeEventListener('abort', killGroup)
          onLog('acceptance output', {script: file, output: output.slice(-4096)})
          resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1))
        })
      })
    },
    async mark() {
      const head = await run('git', ['rev-parse', '--verify', '-q', 'HEAD'], root)
      let mark: string | null
      if (head.code === 0) mark = head.stdout.trim()
      else mark = (await run('git', ['rev-parse', '--is-inside-work-tree'], root)).code === 0 ? EMPTY_TREE : null
      // what was already uncommitted or untracked at cycle start is not this cycle's change
      baseline = mark ? {mark, state: await worktreeState(root, mark)} : null
      return mark
    },
    async changedSince(mark) {
      if (!mark) return null
      const now = await worktreeState(root, mark)
      if (!now) return null
      const before = baseline && baseline.mark === mark ? baseline.state : null
      let lines = 0
      let files = 0
      for (const [f, n] of now.tracked) {
        const b = before?.tracked.get(f)
        if (b && b.added === n.added && b.deleted === n.deleted && b.stat === n.stat) continue
        files++
        lines += Math.abs(n.added - (b?.added ?? 0)) + Math.abs(n.deleted - (b?.deleted ?? 0))
      }
      // back to the cycle-start commit's content during the cycle: that is a change too
      if (before) {
        for (const [f, b] of before.tracked) {
          if (now.tracked.has(f)) continue
          files++
          lines += b.added + b.deleted
        }
      }
      for (const [f, n] of now.untracked) {
        const b = before?.untracked.get(f)
        if (b && b.stat === n.stat) continue
        files++
        lines += Math.abs(n.lines - (b?.lines ?? 0))
      }
      return {lines, files}
    },
    async exists(file) {
      try {
        await access(path.resolve(root, file))
        return true
      } catch {
        return false
      }
    },
  }
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, {once: true})
  })
}

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
  const placeholder: AgentSpec = {kind: 'command', name: input.agent.claude ? 'claude' : input.agent.codex ? 'codex' : input.agent.agent ?? env.HELIX_AGENT ?? 'codex', path: ''}
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
          if (error instanceof HelixError && error.exitCode === 3) return {ok: false, message: error.message}
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
        await reopenBead(paths, id, reason)
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
        const opts = resolveAgentOptions({...input.agent, timeout: timeoutSec}, env, cwd)
        const impl = opts.agent
        const review = input.reviewAgent ? resolveAgent(input.reviewAgent, env, cwd) : defaultReviewAgent(impl, env, cwd)
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
        }),
      describe: (agent, action, prompt) =>
        formatDryRun(buildInvocation({agent, action, prompt, root, ...(model ? {model} : {}), ...(effort ? {effort} : {})}), prompt, root).replace(/\n--- prompt ---[\s\S]*$/, ''),
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
    },
    clock: {now: () => new Date()},
    sleep: abortableSleep,
    async openLog() {
      const log = await openSessionLog(paths.logDir)
      logRef = log
      return log
    },
    async recoverOrphans(say) {
      const r = await recoverOrphans(paths, {owner, probe, thresholdSec: threshold, say})
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
    pid: process.pid,
    env,
  }
  return {deps, paths, timeoutSec}
}
