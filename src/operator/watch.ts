/**
 * `helix status --watch [SECONDS]`: redraw in place until SIGINT.
 *
 * oclif option flags always need a value, so `--watch` alone would be a parse
 * error. `normalizeWatchArgv` rewrites argv before parsing: a bare `--watch`
 * (end of argv, or followed by something that is not a number) gets the default
 * interval inserted; `--watch 5` and `--watch=5` pass through unchanged.
 */
import {abortableSleep} from '../util/abort.js'
import {errorMessage} from '../util/errors.js'
import {hhmmss} from '../util/time.js'

export const DEFAULT_WATCH_SECONDS = 2

const NUMBER = /^\d+(\.\d+)?$/

export function normalizeWatchArgv(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    out.push(a)
    if (a === '--') {
      out.push(...argv.slice(i + 1))
      break
    }
    if (a === '--watch' || a === '-w') {
      const next = argv[i + 1]
      if (next === undefined || !NUMBER.test(next)) out.push(String(DEFAULT_WATCH_SECONDS))
    }
  }
  return out
}

/** Validates the interval text; returns seconds or throws a one-line reason. */
export function parseWatchSeconds(text: string): number {
  if (!NUMBER.test(text)) throw new Error(`--watch expects a number of seconds, got '${text}'`)
  const n = Number(text)
  if (!(n >= 0.2) || n > 86_400) throw new Error(`--watch expects between 0.2 and 86400 seconds, got '${text}'`)
  return n
}

export interface WatchOptions {
  intervalSec: number
  /** renders one frame (given the terminal size) */
  frame: (size: {width: number; height: number}) => Promise<string>
  out?: NodeJS.WriteStream
  /** resolves the loop when aborted (SIGINT handler aborts it) */
  signal: AbortSignal
  now?: () => Date
  /**
   * a file, a pipe or `TERM=dumb`: no cursor moves or clears (they were written into the file
   * as escape bytes); each frame is printed whole, after a blank line, and not cut to a screen
   */
  plain?: boolean
}

const HOME = '\u001b[H'
const CLEAR_EOL = '\u001b[K'
const CLEAR_EOS = '\u001b[J'
const CLEAR_ALL = '\u001b[2J'
const HIDE_CURSOR = '\u001b[?25l'
const SHOW_CURSOR = '\u001b[?25h'

/** Runs until `signal` aborts. Each frame: cursor home, lines with clear-to-EOL, clear to end of screen (`plain`: the lines, after a blank line). */
export async function watchLoop(opts: WatchOptions): Promise<void> {
  const out = opts.out ?? process.stdout
  const now = opts.now ?? (() => new Date())
  const plain = opts.plain === true
  if (!plain) out.write(CLEAR_ALL + HOME + HIDE_CURSOR)
  let first = true
  try {
    while (!opts.signal.aborted) {
      const width = out.columns || 80
      const height = out.rows || 24
      let body: string
      try {
        body = await opts.frame({width, height: height - 1})
      } catch (error) {
        body = `helix status: ${errorMessage(error).split('\n')[0]}\n`
      }
      // a narrow pane (39 columns) keeps the clock visible: the hint goes first
      const header = width < 60 ? `helix status · ${opts.intervalSec}s · ${hhmmss(now())}` : `helix status — every ${opts.intervalSec}s — ${hhmmss(now())} (Ctrl-C to quit)`
      const lines = [header.slice(0, width), ...body.replace(/\n$/, '').split('\n')]
      if (plain) out.write(`${first ? '' : '\n'}${lines.join('\n')}\n`)
      else out.write(HOME + lines.slice(0, height).map((l) => l + CLEAR_EOL).join('\n') + CLEAR_EOS)
      first = false
      await abortableSleep(opts.intervalSec * 1000, opts.signal)
    }
  } finally {
    if (!plain) out.write(SHOW_CURSOR)
  }
}
