import * as Flags from '@oclif/core/flags'
import {agentFlags} from '../cli/agent-flags.js'
import {armRunSignals} from '../cli/run-signals.js'
import {HelixCommand} from '../cli/base-command.js'
import {EXIT, HelixError} from '../util/errors.js'
import type {Confine} from '../agents/types.js'

export default class Run extends HelixCommand {
  static override summary = 'Drain the ready queue through the agent in bounded cycles'
  static override description =
    'Picks the next ready bead, claims it, dispatches the implementation agent, checks the outcome, and repeats until the queue drains, --max-cycles completed cycles, or a check says stop.'

  static override flags = {
    ...agentFlags,
    'max-cycles': Flags.integer({description: 'stop after N completed cycles, 0 = unlimited (default: config, else 0)', min: 0}),
    summary: Flags.boolean({char: 's', description: 'summary lines only on stderr; stdout stays empty (implies --quiet)'}),
    quiet: Flags.boolean({char: 'q', description: 'do not echo agent output on stdout'}),
    'review-agent': Flags.string({description: 'review agent (default: HELIX_REVIEW_AGENT, else the other of codex/claude when installed, else the implementation agent)'}),
    'review-every': Flags.integer({description: 'run the alignment action every N completed cycles, 0 disables; this is not the code review (default: config, else 15)', min: 0}),
    'review-threshold': Flags.integer({description: 'review when a cycle changed at least N lines or 3 files, 0 = always (default: config, else 100)', min: 0}),
    'auto-review': Flags.boolean({description: 'post-implementation review; --no-auto-review disables (default: config, else on)', allowNo: true}),
    'auto-align': Flags.boolean({description: 'alignment on ALIGN/STOP (default HELIX_AUTO_ALIGN, 1)', allowNo: true}),
    workers: Flags.string({description: 'parallel attempts, each in its own git worktree, 1 to 32 (default HELIX_WORKERS or 1)', helpValue: 'N'}),
    'keep-preserved': Flags.string({description: 'days to keep refs/helix/preserved/* of beads that landed since (default HELIX_KEEP_PRESERVED or 7)', helpValue: 'DAYS'}),
    land: Flags.string({description: "with --workers > 1: 'ff' lands completed work on the base branch, 'none' keeps each branch; with --remote, 'pr' lands through pull requests (default ff)", helpValue: 'ff|none|pr'}),
    'land-check': Flags.string({description: "the team's check, run by sh -c in the attempt's worktree on every candidate before the base moves; a red candidate never lands (default HELIX_LAND_CHECK, none)", helpValue: 'CMD'}),
    'land-check-timeout': Flags.string({description: 'seconds the land check may run (default HELIX_LAND_CHECK_TIMEOUT or 1800)', helpValue: 'SECONDS'}),
    'resolve-attempts': Flags.string({description: 'failed resolve rounds allowed per landing before a conflict or red check means not landed; 0 disables resolve (default HELIX_RESOLVE_ATTEMPTS or 2)', helpValue: 'N'}),
    'pr-auto-merge': Flags.string({description: 'with --land pr: ask the forge to merge once checks pass (default HELIX_PR_AUTO_MERGE, none)', helpValue: 'squash|merge|rebase'}),
    'pr-wait': Flags.string({description: 'with --land pr: keep looking at open pull requests this long when nothing else is selectable (default 1800)', helpValue: 'SECONDS'}),
    'pr-poll': Flags.string({description: 'with --land pr: seconds between looks at each pull request (default 60)', helpValue: 'SECONDS'}),
    'pr-command': Flags.string({description: "with --land pr: another forge's adapter instead of gh, see docs/pr-landing.md (default HELIX_PR_COMMAND, else gh)", helpValue: 'CMD'}),
    'stall-timeout': Flags.string({description: 'kill an agent silent for this many seconds (default HELIX_STALL_TIMEOUT or 900; 0 disables)', helpValue: 'SECONDS'}),
    'max-tokens': Flags.string({description: 'stop dispatching once the run used this many tokens (default HELIX_MAX_TOKENS, none)', helpValue: 'N'}),
    'max-cost': Flags.string({description: 'stop dispatching once agents reported this cost in USD (default HELIX_MAX_COST, none)', helpValue: 'USD'}),
    'max-bead-tokens': Flags.string({description: "don't dispatch a bead again once its attempts (all runs) used this many tokens; it is blocked (default HELIX_MAX_BEAD_TOKENS, none)", helpValue: 'N'}),
    'max-bead-cost': Flags.string({description: "don't dispatch a bead again once its attempts (all runs) cost this much in USD; it is blocked (default HELIX_MAX_BEAD_COST, none)", helpValue: 'USD'}),
    'max-quota-wait': Flags.string({description: 'longest quota pause in seconds before stopping (default HELIX_MAX_QUOTA_WAIT or 21600)', helpValue: 'SECONDS'}),
    notify: Flags.string({description: 'command run with one JSON event on stdin when the run stops, pauses, resumes or blocks a bead (default HELIX_NOTIFY)', helpValue: 'CMD'}),
    remote: Flags.string({description: "several hosts, one queue: the tracker on this git remote's base branch, claims as lease refs there (default: none, one host)", helpValue: 'NAME'}),
    lease: Flags.string({description: 'with --remote: claim lease in seconds, renewed every lease/3 (default 300)', helpValue: 'SECONDS'}),
    'max-offline': Flags.string({description: 'with --remote: stop (exit 4) once the remote was unreachable this long (default 3600)', helpValue: 'SECONDS'}),
    sandbox: Flags.boolean({description: 'confine every agent call with bubblewrap: a private clone per attempt, read-only system, empty home (default HELIX_SANDBOX or config sandbox, off)', allowNo: true}),
    'sandbox-network': Flags.string({description: "with --sandbox: 'on' keeps the network, 'none' cuts it (default HELIX_SANDBOX_NETWORK or on)", helpValue: 'on|none'}),
    'save-config': Flags.boolean({description: 'write the flags given here into .helix/config.json (merged), then run; later runs use them as defaults', default: false}),
  }

  async run(): Promise<void> {
    // first of all: a SIGTERM from here on ends the run the orderly way (SPEC 5.10)
    armRunSignals()
    const {flags} = await this.parse(Run)
    const {runLoopCli} = await import('../cli/run-loop.js')
    const {blameConfigFile, configuredEnv, loadConfig} = await import('../config/project-config.js')
    const cwd = process.cwd()
    // flags > HELIX_* > .helix/config.json > defaults (docs/decisions.md)
    const env = configuredEnv(process.env, cwd)
    const config = loadConfig(cwd)
    const pick = <T>(flag: T | undefined, key: string, fallback: T): T => flag ?? ((config[key] as T | undefined) ?? fallback)
    const maxCycles = pick(flags['max-cycles'], 'max-cycles', 0)
    const reviewEvery = pick(flags['review-every'], 'review-every', 15)
    const reviewThreshold = pick(flags['review-threshold'], 'review-threshold', 100)
    const autoReview = pick(flags['auto-review'], 'auto-review', true)
    const autoAlign = flags['auto-align'] ?? !['0', 'false', 'no', 'off'].includes((env.HELIX_AUTO_ALIGN ?? '1').trim().toLowerCase())
    const agent = {agent: flags.agent, claude: flags.claude, codex: flags.codex, model: flags.model, effort: flags.effort, timeout: flags.timeout}
    // after every flag was checked (bad input changes nothing on disk), before anything starts
    const beforeStart = async (signal: AbortSignal, confine?: Confine): Promise<void> => {
      if (autoReview && !flags['dry-run']) {
        // an agent that cannot review is caught now, not after the night's first epic
        const {findDdxRoot} = await import('../util/root.js')
        const root = findDdxRoot(cwd)
        if (root) {
          const {runReviewPreflight} = await import('../operator/review-preflight.js')
          const refusal = await runReviewPreflight({...agent, reviewAgent: flags['review-agent']}, env, root, confine, signal)
          if (refusal) throw new HelixError(refusal, EXIT.ERROR)
        }
      }
      // interrupted meanwhile: the run stops, and nothing is saved
      if (flags['save-config'] && !signal.aborted) {
        const {saveRunFlags} = await import('../config/save-flags.js')
        this.err(saveRunFlags(cwd, flags))
      }
    }
    const typed = {agent: flags.agent !== undefined || flags.claude === true || flags.codex === true, reviewAgent: flags['review-agent'] !== undefined}
    // a missing agent the config file named says so
    const code = await runLoopCli({
      cwd,
      env,
      beforeStart,
      agent,
      reviewAgent: flags['review-agent'],
      keepPreserved: flags['keep-preserved'],
      summary: flags.summary,
      quiet: flags.quiet || flags.summary,
      limits: {
        workers: flags.workers,
        land: flags.land,
        'stall-timeout': flags['stall-timeout'],
        'land-check': flags['land-check'],
        'land-check-timeout': flags['land-check-timeout'],
        'resolve-attempts': flags['resolve-attempts'],
        'max-tokens': flags['max-tokens'],
        'max-cost': flags['max-cost'],
        'max-bead-tokens': flags['max-bead-tokens'],
        'max-bead-cost': flags['max-bead-cost'],
        'max-quota-wait': flags['max-quota-wait'],
        notify: flags.notify,
      },
      sandbox: {sandbox: flags.sandbox, 'sandbox-network': flags['sandbox-network']},
      pr: {'pr-auto-merge': flags['pr-auto-merge'], 'pr-wait': flags['pr-wait'], 'pr-poll': flags['pr-poll'], 'pr-command': flags['pr-command']},
      ...(flags.remote !== undefined || flags.lease !== undefined || flags['max-offline'] !== undefined ? {remote: {remote: flags.remote, lease: flags.lease, 'max-offline': flags['max-offline']}} : {}),
      options: {
        maxCycles,
        summary: flags.summary,
        reviewEvery,
        reviewThreshold,
        autoReview,
        autoAlign,
        dryRun: flags['dry-run'],
        commandName: 'helix run',
        // runs.jsonl keeps what the operator asked for (SPEC 16.5); the agent command stays out of it
        flags: Object.fromEntries(
          Object.entries({...flags, 'max-cycles': maxCycles, 'review-every': reviewEvery, 'review-threshold': reviewThreshold, 'auto-review': autoReview}).filter(
            ([k, v]) => v !== undefined && k !== 'notify' && k !== 'save-config',
          ),
        ),
      },
    }).catch((error: unknown) => {
      throw blameConfigFile(error, cwd, process.env, typed)
    })
    if (code !== EXIT.OK) this.exit(code)
  }
}
