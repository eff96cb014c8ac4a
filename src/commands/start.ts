import {HelixCommand} from '../cli/base-command.js'
import {startRun} from '../operator/control.js'
import {sanitize} from '../util/sanitize.js'

export default class Start extends HelixCommand {
  static override description = 'Start `helix run --summary` in the background (own session, output to .helix-logs/start-*.log)'

  static override examples = ['<%= config.bin %> start', '<%= config.bin %> start --max-cycles 5 --claude']

  static override usage = 'start [--max-cycles N] [--claude|--codex] [any other `helix run` flag…]'

  // every flag is forwarded to `helix run`, which validates them
  static override strict = false

  async run(): Promise<void> {
    // no parse: oclif rejects flags it does not know even when not strict, and
    // `helix run` (the child) validates the flags and reports bad ones itself
    const {pid, log, finished} = await startRun({args: this.argv})
    this.out(`helix: started (pid=${pid}, log=${sanitize(log)})`)
    if (finished) this.err('helix: the run already finished (rc=0)')
  }
}
