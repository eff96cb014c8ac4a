import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {existsSync} from 'node:fs'
import path from 'node:path'
import {abortableSleep} from '../util/abort.js'
import {HelixCommand} from '../cli/base-command.js'
import {HelixError, fsErrorWords, EXIT} from '../util/errors.js'
import {projectPaths} from '../util/root.js'
import {sanitize} from '../util/sanitize.js'
import {renderLogFile, renderLogLines} from '../output/log-render.js'
import {parseLinePointer, parseSlot} from '../output/log-args.js'
import {newestSessionLog} from '../output/log-lookup.js'
import {followLog} from '../output/log-follow.js'

export default class Logs extends HelixCommand {
  static override description = 'Show the newest session log (.helix-logs/helix-*.log) for people'

  static override examples = [
    '<%= config.bin %> logs',
    '<%= config.bin %> logs --follow',
    '<%= config.bin %> logs .helix-logs/helix-20260101-120000.log',
    '<%= config.bin %> logs --lines L12–L340 .helix-logs/helix-20260101-120000.log',
    "<%= config.bin %> logs --lines 'L40–L88 (w2)' .helix-logs/helix-20260101-120000.log",
    '<%= config.bin %> logs --lines L40-L88 --slot w2',
  ]

  static override args = {
    file: Args.string({description: 'a log file (default: the newest session log)', required: false}),
  }

  static override flags = {
    follow: Flags.boolean({char: 'f', description: 'keep printing new records until Ctrl-C', default: false}),
    lines: Flags.string({
      description:
        "print exactly the records on these lines, with their line numbers: a summary line's pointer (L12–L340, L12-L340 or 12-340; a --workers pointer 'L40–L88 (w2)' keeps only that slot's records) (default: the whole log)",
      helpValue: 'A-B',
    }),
    slot: Flags.string({
      description: 'only the records of this worker slot of a --workers run (w2 or 2) (default: every record)',
      helpValue: 'wN',
    }),
  }

  private readonly abort = new AbortController()

  private get aborted(): boolean {
    return this.abort.signal.aborted
  }

  /** `--follow` before any run: wait for the first session log instead of failing. */
  private async waitForFirstLog(logDir: string): Promise<string | null> {
    process.stderr.write(`helix: waiting for a session log in ${logDir} (Ctrl-C to quit)\n`)
    const stop = () => this.abort.abort()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    try {
      while (!this.aborted) {
        const found = newestSessionLog(logDir)
        if (found) return found
        await abortableSleep(250, this.abort.signal) // Ctrl-C ends the wait at once
      }
      return null
    } finally {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
    }
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Logs)
    const pointer = flags.lines === undefined ? null : parseLinePointer(flags.lines)
    const range = pointer ? {from: pointer.from, to: pointer.to} : null
    if (range && flags.follow) throw new HelixError('--lines and --follow cannot be combined', EXIT.ERROR)
    const flagSlot = flags.slot === undefined ? undefined : parseSlot(flags.slot)
    if (flagSlot !== undefined && pointer?.slot !== undefined && flagSlot !== pointer.slot) {
      throw new HelixError(`--slot w${flagSlot} and the pointer's (w${pointer.slot}) differ; give one`, EXIT.ERROR)
    }
    const slot = flagSlot ?? pointer?.slot
    const paths = projectPaths(process.cwd(), process.env)
    const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR
    let file: string
    // a whole pasted pointer (`… in <path>`) names its file; an explicit FILE wins
    const named = args.file ?? pointer?.file
    if (named) {
      const candidates = [path.resolve(named), path.join(paths.logDir, named)]
      const found = candidates.find((c) => existsSync(c))
      if (!found) throw new HelixError(`log file not found: ${sanitize(named)}`, EXIT.ERROR)
      file = found
    } else {
      let newest = newestSessionLog(paths.logDir)
      if (!newest && flags.follow) {
        newest = await this.waitForFirstLog(paths.logDir)
        if (!newest) return // interrupted while waiting: a normal end
      }
      if (!newest) throw new HelixError(`no session logs in ${sanitize(paths.logDir)}`, EXIT.ERROR)
      file = newest
    }
    if (!flags.follow) {
      let gone = false
      process.stdout.on('error', () => {
        gone = true // reader went away (e.g. `| head`): stop quietly
      })
      const write = (t: string) => !gone && (process.stdout.write(t) || true)
      let short: number | null = null
      try {
        const opts = {color, ...(slot !== undefined ? {slot} : {})}
        if (range) short = await renderLogLines(file, range, write, opts)
        else await renderLogFile(file, write, opts)
      } catch (error) {
        throw new HelixError(`cannot read ${sanitize(file)}: ${sanitize(fsErrorWords(error))}`, EXIT.ERROR)
      }
      if (range && short !== null) {
        // the pointer names lines the file does not have (a different log, or it was cut)
        const rel = sanitize(path.relative(process.cwd(), file) || file)
        throw new HelixError(short < range.from ? `${rel} has only ${short} lines; none in L${range.from}–L${range.to}` : `${rel} has only ${short} lines; printed L${range.from}–L${short}`, EXIT.ERROR)
      }
      return
    }
    const ac = this.abort
    const stop = () => ac.abort()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    process.stdout.on('error', stop) // reader went away (e.g. `| head`)
    if (this.aborted) return
    await followLog({
      file,
      logDir: args.file ? undefined : paths.logDir,
      write: (t) => process.stdout.write(t),
      color,
      ...(slot !== undefined ? {slot} : {}),
      signal: ac.signal,
    })
  }
}
