import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../cli/base-command.js'
import {unexpectedArgument} from '../util/errors.js'

export default class Report extends HelixCommand {
  static override summary = 'What happened overnight: beads closed, failures, blocks, tokens, cost and time'
  static override description =
    'Summarises the runs recorded in .helix-logs/runs.jsonl (one line per run, written when it stops): beads closed with titles and commits, failures and blocks with reasons, tokens, cost and time per bead, and the time agents were paused or idle. With --remote, the runs of every host of the fleet, as each pushed them to the remote at the end of its --remote run.'

  static override examples = ['<%= config.bin %> report', '<%= config.bin %> report --since 7d --json', '<%= config.bin %> report --since 2026-11-22 --html report.html', '<%= config.bin %> report --remote origin']

  // Declared (hidden) only so that a stray word is refused in one line.
  static override args = {unexpected: Args.string({hidden: true})}

  static override flags = {
    since: Flags.string({description: 'runs that ended after this: a duration back from now (30m, 24h, 7d, 2w) or a date (2026-11-22, 2026-11-22T18:00)', default: '24h', helpValue: '24h|DATE'}),
    json: Flags.boolean({description: 'print the report as JSON', default: false}),
    remote: Flags.string({description: "the whole fleet: every host's --remote runs, read from this git remote (refs/helix/runs/*), each bead attributed to the host that landed it (default: this checkout's runs only)", helpValue: 'NAME'}),
    html: Flags.string({description: "write a self-contained HTML page (timeline of cycles per slot, cumulative beads chart, the tables) to FILE; with no FILE or '-', print the page on stdout (default: the text report)", helpValue: '[FILE|-]'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Report, htmlWithoutValue(this.argv))
    if (args.unexpected !== undefined) throw unexpectedArgument(this.id, [args.unexpected])
    const {reportOutput} = await import('../report/index.js')
    process.stdout.write(await reportOutput({since: flags.since, json: flags.json, html: flags.html, ...(flags.remote !== undefined ? {remote: flags.remote} : {})}))
  }
}

/** A bare `--html` (last, or followed by another flag) means `--html -`: the page on stdout. */
export function htmlWithoutValue(argv: string[]): string[] {
  const out: string[] = []
  argv.forEach((a, i) => {
    out.push(a)
    const next = argv[i + 1]
    if (a === '--html' && (next === undefined || (next.startsWith('-') && next !== '-'))) out.push('-')
  })
  return out
}
