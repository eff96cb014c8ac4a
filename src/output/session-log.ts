/**
 * The session log (SPEC 6.3): `.helix-logs/helix-YYYYMMDD-HHMMSS.log`, one per
 * agent-dispatching invocation, pino JSON lines written synchronously so no
 * line is lost on exit or signal.
 *
 * Record shape (the `helix logs` renderer relies on it; docs/agents.md):
 *   every record: pino's `level` (number), `time` (epoch ms), `msg` (string)
 *   helix events:     {msg, ...fields}
 *   dispatch start:   {msg: 'dispatch', dispatch: n, action, agent, argv}
 *   agent output:     {msg: <one line>, stream: 'agent', dispatch: n}
 *   dispatch end:     {msg: 'dispatch end', dispatch: n, rc, tokens, duration_ms, timed_out}
 *
 * pino is loaded lazily: commands that never dispatch an agent never pay for it.
 * The CLI's commands call `loadSessionLogger()` first, a dynamic import that the
 * build bundles as a chunk of its own (much cheaper than resolving pino's
 * files in node_modules); `openSessionLog` stays synchronous and, if nobody loaded
 * pino before, requires it itself.
 */
import {closeSync, openSync} from 'node:fs'
import {makeDirSync} from '../util/files.js'
import {createRequire} from 'node:module'
import path from 'node:path'
import type {SessionLogLike} from '../agents/types.js'
import {bugLogClosed, setBugLog} from '../util/report-error.js'
import {fileStamp} from '../util/time.js'

type PinoModule = typeof import('pino')
let pinoModule: PinoModule | undefined
/** Load pino ahead of `openSessionLog` (the CLI's way: bundled, see above). */
export async function loadSessionLogger(): Promise<void> {
  pinoModule ??= ((await import('pino')) as unknown as {default: PinoModule}).default
}

function loadPino(): PinoModule {
  if (!pinoModule) {
    const req = createRequire(import.meta.url)
    pinoModule = req('pino') as PinoModule
  }
  return pinoModule
}

/** `YYYYMMDD-HHMMSS` in local time (the file name stamp). */
export {fileStamp as logStamp} from '../util/time.js'

export type SessionLog = SessionLogLike

/**
 * Create a new session log in `logDir`. The file is created exclusively
 * (O_EXCL): when the name for `now` is taken, the next second's name is tried,
 * so two invocations never share a file.
 */
export function openSessionLog(logDir: string, now: Date = new Date()): SessionLog {
  makeDirSync(logDir)
  let fd = -1
  let file = ''
  for (let i = 0; i < 3600; i++) {
    file = path.join(logDir, `helix-${fileStamp(new Date(now.getTime() + i * 1000))}.log`)
    try {
      fd = openSync(file, 'wx', 0o644)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  if (fd < 0) throw new Error(`cannot create a session log in ${logDir}`)

  const pino = loadPino()
  const dest = pino.destination({dest: fd, sync: true})
  const logger = pino.pino({level: 'debug', base: undefined}, dest)
  let lines = 0
  let closed = false

  const write = (level: 'info' | 'warn' | 'error' | 'debug', fields: Record<string, unknown>, msg: string) => {
    if (closed) return
    // msg travels as pino's message argument with no format arguments, so a
    // `%s` in agent output is never interpreted; JSON escaping keeps it on one line.
    try {
      logger[level](fields, msg)
    } catch {
      // a log that cannot be written (disk full, fd gone) must not take the
      // agent or the run down with it; the line is lost and not counted
      return
    }
    lines++
  }

  // an internal error at the command's boundary keeps its stack here (src/util/report-error.ts)
  setBugLog({path: file, write: (msg, fields) => write('error', fields, msg)})

  return {
    path: file,
    get lines() {
      return lines
    },
    event(msg, fields = {}, level = 'info') {
      const {msg: _ignored, ...rest} = fields as Record<string, unknown> & {msg?: unknown}
      write(level, rest, String(msg))
    },
    agentLine(line, fields = {}) {
      write('info', {...fields, stream: 'agent'}, line)
    },
    close() {
      if (closed) return
      closed = true
      // still this invocation's log: a later internal error is appended to it as a line
      bugLogClosed(file)
      try {
        dest.flushSync()
      } catch {
        /* nothing buffered */
      }
      try {
        closeSync(fd)
      } catch {
        /* already closed */
      }
    },
  }
}
