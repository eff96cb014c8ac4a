import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../cli/base-command.js'
import {HelixError, EXIT} from '../util/errors.js'

export default class Dashboard extends HelixCommand {
  static override summary = 'Serve a live page of the night: running slots, the queue, the last events, the fleet, the charts'
  static override description =
    "Serves one read-only page on 127.0.0.1 (port 7420 or the next free one) that updates itself over Server-Sent Events while runs go on: each busy slot with its agent's last output line and log link, the queue with progress and ETA, the last events, with --remote the fleet, and the report's timeline and chart. Runs until Ctrl-C."

  static override examples = ['<%= config.bin %> dashboard', '<%= config.bin %> dashboard --port 8080 --open', '<%= config.bin %> dashboard --project ~/a --project ~/b', '<%= config.bin %> dashboard --listen 0.0.0.0 --token s3cret']

  // Declared (hidden) only so that a stray word is refused in one line.
  static override args = {unexpected: Args.string({hidden: true})}

  static override flags = {
    port: Flags.string({description: 'the port to serve on; taken: one line, exit 1 (default: 7420, or the next free port)', helpValue: 'N'}),
    open: Flags.boolean({description: "open the page in the system's browser (default: off)", default: false}),
    listen: Flags.string({description: 'serve on this address instead of 127.0.0.1 (e.g. 0.0.0.0); needs --token (default: 127.0.0.1 only)', helpValue: 'ADDR'}),
    token: Flags.string({description: 'a secret every request must carry (?token=T once, then a cookie; or Authorization: Bearer T); default: $HELIX_DASHBOARD_TOKEN, else none on 127.0.0.1', helpValue: 'T'}),
    project: Flags.string({description: 'a project directory to show (repeat for several; default: the project around the current directory)', helpValue: 'DIR', multiple: true}),
    remote: Flags.string({description: 'also show the fleet on this git remote: claims by host with expiry, pull requests awaiting merge (read every 10 s; default: none)', helpValue: 'NAME'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Dashboard)
    if (args.unexpected !== undefined) throw new HelixError(`unexpected argument: ${args.unexpected}`, EXIT.ERROR)
    const {startDashboard} = await import('../dashboard/index.js')
    const d = await startDashboard({
      cwd: process.cwd(),
      env: process.env,
      port: flags.port,
      listen: flags.listen,
      token: flags.token,
      projects: flags.project,
      remote: flags.remote,
      open: flags.open,
      print: (line) => process.stdout.write(line + '\n'),
    })
    await new Promise<void>((resolve) => {
      const stop = () => resolve()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      process.once('SIGHUP', stop)
    })
    await d.close()
  }
}
