/** A forge CLI run without a shell: argv only, optional stdin, bounded time and output. */
import {spawn} from 'node:child_process'
import {errorMessage} from '../util/errors.js'

export interface ForgeRun {
  code: number
  stdout: string
  stderr: string
  /** the binary is not there (ENOENT) */
  missing: boolean
}

const MAX_OUT = 4 * 1024 * 1024
/** how long one forge command may take before it counts as a forge that did not answer */
export const FORGE_TIMEOUT_MS = 120_000

export function runForge(cmd: string, args: string[], o: {cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number}): Promise<ForgeRun> {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let done = false
    const finish = (r: ForgeRun) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve(r)
    }
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(cmd, args, {cwd: o.cwd, env: {...o.env, GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1', NO_COLOR: '1'}, stdio: ['pipe', 'pipe', 'pipe']})
    } catch (error) {
      resolve({code: 127, stdout: '', stderr: errorMessage(error), missing: true})
      return
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      // the first line, so that a reason read from it says so (forgeAway: a forge that did not answer is waited for)
      finish({code: 124, stdout, stderr: `${cmd} did not answer within ${Math.round((o.timeoutMs ?? FORGE_TIMEOUT_MS) / 100) / 10}s\n${stderr}`, missing: false})
    }, o.timeoutMs ?? FORGE_TIMEOUT_MS)
    timer.unref?.()
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < MAX_OUT) stdout += d
    })
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < MAX_OUT) stderr += d
    })
    child.on('error', (error: NodeJS.ErrnoException) => finish({code: 127, stdout, stderr: stderr || error.message, missing: error.code === 'ENOENT'}))
    child.on('close', (code, signal) => finish({code: code ?? (signal ? 128 : 1), stdout, stderr, missing: false}))
    child.stdin?.on('error', () => {})
    child.stdin?.end(o.input ?? '')
  })
}

/** the first non-empty line of an answer, for a one-line reason */
export function firstForgeLine(r: ForgeRun): string {
  return `${r.stderr}\n${r.stdout}`.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? `exit ${r.code}`
}
