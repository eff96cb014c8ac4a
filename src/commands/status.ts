import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../cli/base-command.js'
import {HelixError, errorMessage, EXIT, unexpectedArgument} from '../util/errors.js'
import {outputSize, statusOutput} from '../operator/report.js'
import {normalizeWatchArgv, parseWatchSeconds, watchLoop} from '../operator/watch.js'

export default class Status extends HelixCommand {
  // Declared (hidden) only so that a stray word reaches this command and is
  // refused in one line, instead of oclif looking for a command 'status:<word>'.
  static override args = {unexpected: Args.string({hidden: true})}

  static override description = "Show the tracker, the active run's progress and in-flight beads, claimed and parked beads, and the last run (one screen)"

  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --json', '<%= config.bin %> status --watch 5']

  static override flags = {
    json: Flags.boolean({description: 'print the status as one JSON object (counts, active run, progress, workers, parked beads)'}),
    // SPEC 19.5
    remote: Flags.string({description: 'the fleet on this git remote: live claims (host, bead, age, expires in), queue counts at its base tip, active hosts (default: none, this checkout)', helpValue: 'NAME'}),
    lease: Flags.string({description: "with --remote: the period for 'active hosts', in seconds (default 300)", helpValue: 'SECONDS'}),
    watch: Flags.string({
      char: 'w',
      description: 'redraw in place every SECONDS (default 2) until Ctrl-C',
      helpValue: '[SECONDS]',
    }),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Status, normalizeWatchArgv(this.argv))
    if (args.unexpected !== undefined) throw unexpectedArgument(this.id, [args.unexpected])
    const fleet = flags.remote !== undefined || flags.lease !== undefined
    const {fleetStatus} = fleet ? await import('../operator/fleet-command.js') : {fleetStatus: null}
    const fleetFlags = {remote: flags.remote, lease: flags.lease, json: flags.json}
    if (fleetStatus && flags.watch === undefined) {
      process.stdout.write(await fleetStatus({...fleetFlags, ...outputSize(process.stdout)}))
      return
    }
    if (flags.watch === undefined) {
      const text = await statusOutput({json: flags.json, ...outputSize(process.stdout)})
      process.stdout.write(text)
      return
    }
    let interval: number
    try {
      interval = parseWatchSeconds(flags.watch)
    } catch (error) {
      throw new HelixError(errorMessage(error), EXIT.ERROR)
    }
    const ac = new AbortController()
    const stop = () => ac.abort()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    // the reader went away (`helix status --watch | head`): stop as Ctrl-C would, exit 0
    // (the frames went on into the broken pipe, and the watch never ended)
    process.stdout.once('error', stop)
    // a stale pid notice would scroll the screen: collect it into the frame instead
    await watchLoop({
      intervalSec: interval,
      signal: ac.signal,
      plain: !process.stdout.isTTY || process.env.TERM === 'dumb',
      // --remote --watch redraws the fleet view
      frame: async ({width, height}) => (fleetStatus ? fleetStatus({...fleetFlags, width, height}) : statusOutput({json: flags.json, width, height, warn: () => {}})),
    })
    process.stdout.write('\n')
  }
}
