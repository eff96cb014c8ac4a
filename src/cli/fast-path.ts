/**
 * Startup fast path: `status` (a tmux pane or a script polls it) and the two commands
 * an agent runs on every bead (`tracker show <id>`, `tracker close <id>`) are answered
 * without loading oclif, which costs about as much again as a bare `node -e 0`. Only the exact
 * argv shapes below are handled here; anything else returns false and bin/run.js hands
 * argv to oclif. The output comes from the same domain functions the oclif commands
 * call, and a failure goes through the same `reportError` as every command's.
 */
import {writeSync} from 'node:fs'
import {onStdoutError} from './pipe.js'

type Handler = (json: boolean) => Promise<string>
type IdHandler = (id: string, json: boolean) => Promise<string>

const handlers: Record<string, Handler> = {
  status: async (json) => {
    const {outputSize, statusOutput} = await import('../operator/report.js')
    // the JSON form has no width: it does not touch process.stdout (creating that stream costs startup time)
    if (json) return statusOutput({json})
    return statusOutput({json, ...outputSize(process.stdout)})
  },
}

// the two an agent runs on every bead: one positional id, optionally --json
const idHandlers: Record<string, IdHandler> = {
  'tracker show': async (id, json) => (await import('../tracker/show-close.js')).trackerShowOutput(id, {json}),
  'tracker close': async (id, json) => (await import('../tracker/show-close.js')).trackerCloseOutput(id, {json}),
}

/** The handler key for argv (and the bead id, for show and close), or null when the fast path does not apply. */
export function fastPathKey(argv: readonly string[]): {key: string; json: boolean; id?: string} | null {
  const json = argv.at(-1) === '--json'
  const words = json ? argv.slice(0, -1) : argv
  if (words.some((w) => w.startsWith('-'))) return null
  const key = words.join(' ')
  if (Object.hasOwn(handlers, key)) return {key, json}
  const idKey = words.slice(0, -1).join(' ')
  const id = words.at(-1)
  // an empty id is left to oclif, which calls it a missing argument
  return words.length === 3 && id && Object.hasOwn(idHandlers, idKey) ? {key: idKey, json, id} : null
}

/** Runs a fast-path command; false when argv is not one of its shapes and oclif should answer. */
export async function runFastPath(argv: readonly string[]): Promise<boolean> {
  const hit = fastPathKey(argv)
  if (!hit) return false
  try {
    writeOut(await (hit.id === undefined ? handlers[hit.key](hit.json) : idHandlers[hit.key](hit.id, hit.json)))
  } catch (error) {
    // loaded only on failure: a start that succeeds does not compile it
    process.exitCode = (await import('../util/report-error.js')).reportError(error)
  }
  return true
}

/**
 * Writes the answer to fd 1 directly: no stdout stream is created (that
 * costs startup time), and the write is complete when this returns, so the process
 * may end at once. A non-blocking pipe that is full (EAGAIN) gets the rest through
 * process.stdout, which drains it before node exits; a reader that went away (EPIPE)
 * ends the output, as it would for a stream.
 */
export function writeOut(text: string): void {
  const buf = Buffer.from(text, 'utf8')
  let off = 0
  try {
    while (off < buf.length) off += writeSync(1, buf, off, buf.length - off)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') return
    process.stdout.on('error', onStdoutError)
    process.stdout.write(buf.subarray(off))
  }
}
