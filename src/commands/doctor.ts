import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {agentFlags} from '../cli/agent-flags.js'
import {parseTimeout, refuseEmptyAgent} from '../agents/resolve.js'
import {HelixCommand} from '../cli/base-command.js'
import {EXIT, unexpectedArgument} from '../util/errors.js'
import {NOT_A_PROJECT} from '../util/root.js'
import {doctorReport, renderDoctor} from '../operator/doctor.js'

export default class Doctor extends HelixCommand {
  // Declared (hidden) only so that a stray word reaches this command and is
  // refused in one line, instead of oclif looking for a command 'doctor:<word>'.
  static override args = {unexpected: Args.string({hidden: true})}

  static override description =
    'Check node, the agent a run with the same agent flags would use, tracker health, stale locks and pid files (exit 1 when something needs fixing)'

  static override flags = {
    // every agent flag of `helix run` is accepted, so a suggested `--agent X` works here too
    ...agentFlags,
    'review-agent': Flags.string({description: 'review agent to check (default: HELIX_REVIEW_AGENT, else none required)', helpValue: 'AGENT'}),
    json: Flags.boolean({description: 'print {checks: [{level, what, detail, fix?}], problems} as JSON', default: false}),
    remote: Flags.string({description: "also check this git remote of a --remote fleet: it answers, and this host's clock is within 30 s of the remote's and the other hosts' (default: none)", helpValue: 'NAME'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Doctor)
    if (args.unexpected !== undefined) throw unexpectedArgument(this.id, [args.unexpected])
    // the agent flags are run's: a value run would refuse is refused here too
    if (flags.timeout !== undefined) parseTimeout(flags.timeout)
    // `--agent ''` is not "the default agent": run refuses it, so doctor does
    refuseEmptyAgent(flags.agent)
    const {configuredEnv} = await import('../config/project-config.js')
    // the project's .helix/config.json counts as a run would count it (flags > env > config)
    const env = configuredEnv(process.env, process.cwd())
    const report = await doctorReport({env, remote: flags.remote, agents: {agent: flags.agent, claude: flags.claude, codex: flags.codex, reviewAgent: flags['review-agent']}})
    if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n')
    // outside a project the `helix: not a helix project` line says it once; the report does not repeat it
    else process.stdout.write(renderDoctor(report.not_a_project ? {...report, checks: report.checks.filter((c) => c.what !== 'project')} : report))
    if (report.not_a_project) this.err(`helix: ${NOT_A_PROJECT}`)
    if (report.problems) this.exit(EXIT.ERROR)
  }
}
