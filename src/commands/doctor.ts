import {Flags} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {doctorReport, renderDoctor} from '../status/doctor.js'

export default class Doctor extends HelixCommand {
  static override description = 'Check node, agent binaries, tracker health, stale locks and pid files (exit 1 when something needs fixing)'

  static override flags = {
    json: Flags.boolean({description: 'print {checks: [{level, what, detail, fix?}], problems}'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Doctor)
    const report = await doctorReport()
    process.stdout.write(flags.json ? JSON.stringify(report, null, 2) + '\n' : renderDoctor(report))
    if (report.problems) this.exit(1)
  }
}
