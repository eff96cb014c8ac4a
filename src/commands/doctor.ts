import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {HelixError} from '../util/errors.js'
import {doctorReport, renderDoctor} from '../status/doctor.js'

export default class Doctor extends HelixCommand {
  // Declared (hidden) only so that a stray word reaches this command and is
  // refused in one line, instead of oclif looking for a command 'doctor:<word>'.
  static override args = {unexpected: Args.string({hidden: true})}

  static override description = 'Check node, agent binaries, tracker health, stale locks and pid files (exit 1 when something needs fixing)'

  static override flags = {
    json: Flags.boolean({description: 'print {checks: [{level, what, detail, fix?}], problems}'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Doctor)
    if (args.unexpected !== undefined) throw new HelixError(`unexpected argument: ${args.unexpected}`, 1)
    const report = await doctorReport()
    process.stdout.write(flags.json ? JSON.stringify(report, null, 2) + '\n' : renderDoctor(report))
    if (report.problems) this.exit(1)
  }
}
