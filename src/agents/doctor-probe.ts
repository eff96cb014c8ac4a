/**
 * `helix doctor`'s agent probes (SPEC 14.6): run each configured agent's
 * `--version` (bounded, no shell) and, for claude, check whether it would refuse
 * `--dangerously-skip-permissions` as root. Each agent is reported as ok,
 * missing, refusing (or broken: present but `--version` fails), with its fix.
 */
import {spawn} from 'node:child_process'
import path from 'node:path'
import {errorMessage} from '../util/errors.js'
import {isExecutableFile} from '../util/files.js'
import {signalGroup} from '../proc/process.js'
import {sanitize} from '../util/sanitize.js'
import {ROOT_HINT} from './self-report.js'
import {findOnPath} from './resolve.js'

export type ProbeStatus = 'ok' | 'missing' | 'refusing' | 'broken'

export interface AgentProbe {
  /** what the user named: codex, claude, or a command path */
  name: string
  /** implementation agent / review agent / agent (a known agent nobody selected) */
  role: 'implementation agent' | 'review agent' | 'agent'
  /** selected by HELIX_AGENT / HELIX_REVIEW_AGENT (or the codex default) */
  required: boolean
  status: ProbeStatus
  path: string | null
  /** first line `--version` printed; null when not run or it failed */
  version: string | null
  detail: string
  fix?: string
}

export interface ProbeOptions {
  env?: NodeJS.ProcessEnv
  root?: string
  /** bound on each `--version` call (default 5000 ms) */
  timeoutMs?: number
  /** the effective uid (default process.getuid()) */
  uid?: number
  /** `helix run`'s agent flags (doctor's --agent/--claude/--codex/--review-agent) */
  flags?: ProbeAgentFlags
}

export const VERSION_TIMEOUT_MS = 5000

/** claude would refuse to bypass permissions (SPEC 14.1): running as root without IS_SANDBOX=1. */
export function claudeWouldRefuse(uid: number | undefined, env: NodeJS.ProcessEnv): boolean {
  return uid === 0 && env.IS_SANDBOX !== '1'
}

/** `<file> --version`: no shell, stdin /dev/null, own process group killed after `timeoutMs`. */
export function runVersion(file: string, timeoutMs = VERSION_TIMEOUT_MS, env: NodeJS.ProcessEnv = process.env): Promise<{ok: boolean; line: string}> {
  return new Promise((resolve) => {
    let out = ''
    let done = false
    const end = (ok: boolean, line: string) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve({ok, line})
    }
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(file, ['--version'], {stdio: ['ignore', 'pipe', 'pipe'], detached: true, env})
    } catch (err) {
      resolve({ok: false, line: errorMessage(err)})
      return
    }
    const kill = () => {
      if (child.pid) signalGroup(child.pid, 'SIGKILL') // false when already gone
    }
    const timer = setTimeout(() => {
      kill()
      end(false, `--version did not answer within ${Math.round(timeoutMs / 100) / 10}s`)
    }, timeoutMs)
    let err = ''
    child.stdout?.on('data', (b: Buffer) => {
      if (out.length < 4096) out += b.toString('utf8')
    })
    child.stderr?.on('data', (b: Buffer) => {
      if (err.length < 4096) err += b.toString('utf8')
    })
    child.once('error', (err) => end(false, err.message))
    child.once('close', (code, signal) => {
      kill() // anything it left in its group
      // the version is on stdout; stderr may open with notices (codex 0.169.0 with HOME under /tmp:
      // `WARNING: proceeding, even though we could not create PATH aliases …`)
      const lines = (text: string) => text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '')
      const first = lines(out)[0] ?? lines(err).find((l) => !/^warning\b/i.test(l)) ?? lines(err)[0] ?? ''
      const line = sanitize(first.length > 120 ? first.slice(0, 119) + '…' : first)
      if (code === 0) end(true, line)
      else end(false, `--version exited ${code ?? signal}${line ? `: ${line}` : ''}`)
    })
  })
}

/** `helix run`'s agent flags, when doctor is given them (they win over the environment). */
export interface ProbeAgentFlags {
  agent?: string
  claude?: boolean
  codex?: boolean
  reviewAgent?: string
}

/** The agents doctor looks at: --claude/--codex/--agent or HELIX_AGENT (default codex), --review-agent or HELIX_REVIEW_AGENT, then codex and claude. */
export function configuredAgents(env: NodeJS.ProcessEnv, flags: ProbeAgentFlags = {}): Array<{name: string; role: AgentProbe['role']; required: boolean}> {
  const impl = flags.claude ? 'claude' : flags.codex ? 'codex' : flags.agent?.trim() || env.HELIX_AGENT?.trim() || 'codex'
  const review = flags.reviewAgent?.trim() || env.HELIX_REVIEW_AGENT?.trim() || ''
  const out: Array<{name: string; role: AgentProbe['role']; required: boolean}> = [{name: impl, role: 'implementation agent', required: true}]
  if (review && review !== impl) out.push({name: review, role: 'review agent', required: true})
  for (const known of ['codex', 'claude']) if (!out.some((a) => a.name === known)) out.push({name: known, role: 'agent', required: false})
  return out
}

function kindOf(name: string): 'codex' | 'claude' | 'command' {
  const base = path.basename(name)
  return base === 'codex' || base === 'claude' ? base : 'command'
}

/**
 * Probe every configured agent, in parallel. A command agent is not run (its
 * argv has no `--version` contract: it might start work); it is ok when it is
 * an executable file.
 */
export async function probeAgents(opts: ProbeOptions = {}): Promise<AgentProbe[]> {
  const env = opts.env ?? process.env
  const root = opts.root ?? process.cwd()
  const uid = opts.uid ?? (typeof process.getuid === 'function' ? process.getuid() : undefined)
  return Promise.all(
    configuredAgents(env, opts.flags).map(async ({name, role, required}): Promise<AgentProbe> => {
      const isPath = name.includes('/')
      const file = isPath ? (isExecutableFile(path.resolve(root, name)) ? path.resolve(root, name) : undefined) : findOnPath(name, env)
      const base = {name, role, required, path: file ?? null, version: null}
      if (!file) {
        return {
          ...base,
          status: 'missing',
          detail: isPath ? 'not an executable file' : 'not found on PATH',
          fix: `install ${name} or choose another agent (--agent / HELIX_AGENT${role === 'review agent' ? ' / HELIX_REVIEW_AGENT' : ''})`,
        }
      }
      const kind = kindOf(name)
      if (kind === 'command') return {...base, status: 'ok', detail: `${file} (command agent, not run)`}
      const v = await runVersion(file, opts.timeoutMs ?? VERSION_TIMEOUT_MS, env)
      if (!v.ok) {
        return {...base, status: 'broken', detail: `${file}: ${v.line}`, fix: kind === 'codex' ? 'reinstall it: npm install -g @openai/codex' : 'reinstall it: npm install -g @anthropic-ai/claude-code'}
      }
      if (kind === 'claude' && claudeWouldRefuse(uid, env)) {
        return {...base, version: v.line, status: 'refusing', detail: `${v.line} would refuse to run: --dangerously-skip-permissions cannot be used as root`, fix: ROOT_HINT}
      }
      return {...base, version: v.line, status: 'ok', detail: `${v.line} (${file})`}
    }),
  )
}

/**
 * The doctor lines of the probes, for agents that are present (agentChecks in
 * operator/doctor.ts already reports missing ones): ok with the version; refusing
 * or broken as FAIL when the agent is selected, WARN otherwise.
 */
export async function agentProbeChecks(env: NodeJS.ProcessEnv, root: string, flags?: ProbeAgentFlags): Promise<Array<{level: 'ok' | 'warn' | 'fail'; what: string; detail: string; fix?: string}>> {
  const probes = await probeAgents({env, root, flags})
  return probes
    .filter((p) => p.status !== 'missing')
    .map((p) => ({
      level: p.status === 'ok' ? 'ok' : p.required ? 'fail' : 'warn',
      what: `${p.role} ${sanitize(p.name)} ${p.status === 'ok' ? 'version' : p.status}`,
      detail: sanitize(p.detail),
      ...(p.fix && p.status !== 'ok' ? {fix: p.fix} : {}),
    }))
}
