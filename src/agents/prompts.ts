/**
 * Prompts (SPEC 3.1): a fixed header per action whose first line names the
 * action, the contract phrases stub agents and real agents rely on, and the
 * action document from the workflow library.
 *
 * Untrusted text (bead ids, scopes, context) is inserted as data: it is
 * flattened to one line where it sits on a contract line, and nothing here is
 * ever passed to a shell or used as a format string.
 */
import {existsSync, readFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import path from 'node:path'
import {installRoot} from '../util/install.js'
import {HelixError, EXIT, errorMessage} from '../util/errors.js'
import {isNotFound} from '../util/files.js'
import {NEXT_ACTION_CODES} from './trailers.js'
import type {ActionName, ResolveBrief} from './types.js'

export interface PromptContext {
  root: string
  beadId?: string
  batchIds?: string[]
  scope?: string
  /** SPEC 20.4: what the resolve action repairs (resolve only) */
  repair?: ResolveBrief
  /** execution context (.helix/context.md); implementation only. Undefined → read <root>/.helix/context.md when present */
  contextMd?: string
  libraryRoot?: string
  env?: NodeJS.ProcessEnv
}

export const ACTION_FILES: Record<ActionName, string> = {
  implementation: 'implementation.md',
  check: 'check.md',
  alignment: 'alignment.md',
  backfill: 'backfill.md',
  plan: 'plan.md',
  polish: 'polish.md',
  review: 'fresh-eyes-review.md',
  resolve: 'resolve.md',
}

/** The bundled workflow library: `<package>/workflows` (works from src/ and dist/). */
export function bundledLibraryRoot(): string {
  return path.join(installRoot(), 'workflows')
}

/** HELIX_LIBRARY_ROOT, else the bundled `workflows/`. */
export function libraryRoot(env: NodeJS.ProcessEnv = process.env, explicit?: string): string {
  if (explicit) return path.resolve(explicit)
  const fromEnv = env.HELIX_LIBRARY_ROOT?.trim()
  return fromEnv ? path.resolve(fromEnv) : bundledLibraryRoot()
}

/** `<library>/actions/<file>.md` for an action. */
export function actionFile(action: ActionName, ctx: Pick<PromptContext, 'libraryRoot' | 'env'> = {}): string {
  return path.join(libraryRoot(ctx.env ?? process.env, ctx.libraryRoot), 'actions', ACTION_FILES[action])
}

/** Untrusted text on a contract line: one line, no control characters. */
function data(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim()
}

export const DEFAULT_SCOPE = 'repo'
export const DEFAULT_REVIEW_SCOPE = 'last-commit'

const TRACKER_COMMANDS = [
  'Tracker commands (run them from the project root; helix is on PATH):',
  '- read a bead: `helix tracker show <id> --json`',
  '- append notes: `helix tracker update <id> --append-notes "<text>"`',
  '- create a bead: `helix tracker create "<title>" [--parent <id>] [--deps a,b] [--labels a,b] [--acceptance "<criteria>"]`',
  '- close a bead: `helix tracker close <id>`',
].join('\n')

const NO_GIT_DAMAGE = 'Never run `git push`, and never revert, reset or check out work that is not yours.'

/** First-line wording per action: the phrases stub agents (and SPEC 3.1) key on. */
const FIRST_LINE: Record<ActionName, string> = {
  implementation: 'implementation action for',
  check: 'check action for',
  alignment: 'alignment action for',
  backfill: 'backfill action for',
  plan: 'plan action for',
  polish: 'polish action for',
  review: 'fresh-eyes review of work in',
  resolve: 'resolve action for',
}

/** The scope line's label for the scoped actions. */
const SCOPE_LABEL: Record<Exclude<ActionName, 'implementation' | 'resolve'>, string> = {
  check: 'Scope',
  alignment: 'Scope',
  backfill: 'Scope',
  plan: 'Plan scope',
  polish: 'Polish scope',
  review: 'Review scope',
}

const REREAD_RULE = 'Re-read a bead right before you change it. ' + NO_GIT_DAMAGE

function implementationBody(ctx: PromptContext): string[] {
  const lines = [`Implementation target: ${data(ctx.beadId ?? '')}`]
  const batch = (ctx.batchIds ?? []).map(data).filter(Boolean)
  if (batch.length > 0) {
    lines.push('')
    lines.push(`BATCH MODE: these related ready beads may be completed in the same change: ${batch.join(', ')}`)
    lines.push('The implementation target comes first and decides this cycle. Close each batch bead you actually finish, one by one, after re-reading it; leave the others open.')
  }
  lines.push('')
  lines.push(TRACKER_COMMANDS)
  lines.push('')
  lines.push('Concurrency rule: the tracker may change while you work. Re-read the target with `helix tracker show <id> --json` right before closing it; if its spec, parent, dependencies or scope changed, do not close it — append a note instead.')
  lines.push('helix holds the claim on the target for you: do not claim or unclaim beads. Your close is fenced by HELIX_CLAIM_TOKEN; if it is refused, stop.')
  lines.push(NO_GIT_DAMAGE)
  return lines
}

function resolveBody(ctx: PromptContext): string[] {
  const b = ctx.repair
  const lines = [`Resolve target: ${data(ctx.beadId ?? '')}`, '']
  if (!b) return [...lines, NO_GIT_DAMAGE]
  lines.push(`Base tip: ${data(b.baseTip)}`, `Attempt branch: ${data(b.branch)}`, 'Attempt commits (oldest first):', ...b.commits.map((c) => `- ${data(c)}`), '')
  if (b.kind === 'conflict') {
    lines.push('Rebasing the attempt onto the base tip stopped on a conflict. The rebase is still in progress in this directory, with conflict markers in these files:')
    lines.push(...(b.paths ?? []).map((p) => `- ${data(p)}`))
    lines.push('Merge both sides so that the attempt keeps its intent on top of the base, `git add` the files and run `git rebase --continue` (GIT_EDITOR=true) until the rebase is done.')
  } else {
    lines.push(`The land check \`${data(b.check ?? '')}\` failed on the attempt rebased onto the base tip. Its last lines:`)
    lines.push('```', ...(b.tail ?? []).map(data), '```')
    if (b.logFile) lines.push(`Its full output is in ${data(b.logFile)} (not a tracked file).`)
    lines.push('Fix the code so the check passes, and commit the fix on the attempt branch.')
  }
  if (b.problem) lines.push('', `The previous resolve round was not done: ${data(b.problem)}`)
  lines.push(
    '',
    'Done means: no rebase or merge in progress; HEAD is the attempt branch (not detached) and descends from the base tip; no file has a line starting with `<<<<<<< `, `=======` or `>>>>>>> `; everything committed; the land check passes.',
    'Do not change the tracker (no close, no notes): the bead is already done. Never push, reset or check out other branches.',
  )
  return lines
}

/** What follows the scope line of a scoped action. */
function scopedBody(action: Exclude<ActionName, 'implementation' | 'resolve'>): string[] {
  switch (action) {
    case 'check':
      return [`Trailer rule: when you are done, output a line \`NEXT_ACTION: <CODE>\`, CODE one of \`${NEXT_ACTION_CODES.slice(0, -1).join(', ')}, or ${NEXT_ACTION_CODES.at(-1)}\` — on its own line, nothing else on that line. The last such line counts.`]
    case 'backfill':
      return [
        'Trailer rule: end with a line `BACKFILL_STATUS: <COMPLETE, PARTIAL, NO_CHANGES or FAILED>` and a line `BACKFILL_REPORT: <path of the report file, relative to the project root>`, each on its own line. The report file must exist.',
        NO_GIT_DAMAGE,
      ]
    case 'review':
      return [
        'File every real finding as its own bead labelled `review-finding`: `helix tracker create "<finding>" --type bug --labels review-finding --description "<details>"`. Do not fix anything yourself.',
        'Trailer rule: end with three lines, each on its own line: `REVIEW_STATUS: CLEAN|ISSUES_FOUND` (one of the two), `ISSUES_COUNT: N` and `FINDINGS_FILED: N`.',
        NO_GIT_DAMAGE,
      ]
    default: // alignment, plan, polish
      return [TRACKER_COMMANDS, REREAD_RULE]
  }
}

function header(action: ActionName, ctx: PromptContext, file: string): string[] {
  const lines = [`HELIX ${FIRST_LINE[action]} the project at ${ctx.root}`, `Action document: ${file}`]
  if (action === 'implementation') return [...lines, ...implementationBody(ctx)]
  if (action === 'resolve') return [...lines, ...resolveBody(ctx)]
  const scope = ctx.scope ?? (action === 'review' ? DEFAULT_REVIEW_SCOPE : DEFAULT_SCOPE)
  return [...lines, `${SCOPE_LABEL[action]}: ${data(scope)}`, '', ...scopedBody(action)]
}

/** Build the prompt for `action` (SPEC 3.1). Missing action document → HelixError exit 1. */
export async function buildPrompt(action: ActionName, ctx: PromptContext): Promise<string> {
  if (!(action in ACTION_FILES)) throw new HelixError(`unknown action '${String(action)}'`, EXIT.ERROR)
  const file = actionFile(action, ctx)
  let doc: string
  try {
    doc = await readFile(file, 'utf8')
  } catch (error) {
    if (isNotFound(error)) throw new HelixError(`action document not found: ${file} (check HELIX_LIBRARY_ROOT)`, EXIT.ERROR)
    throw new HelixError(`cannot read action document ${file}: ${errorMessage(error)}`, EXIT.ERROR)
  }
  const parts = [header(action, ctx, file).join('\n')]
  if (action === 'implementation') {
    let context = ctx.contextMd
    if (context === undefined) {
      const f = path.join(ctx.root, '.helix', 'context.md')
      context = existsSync(f) ? readFileSync(f, 'utf8') : undefined
    }
    if (context && context.trim() !== '') parts.push(`--- execution context (.helix/context.md) ---\n${context.trimEnd()}\n--- end execution context ---`)
  }
  parts.push(`--- action document ---\n${doc.trimEnd()}\n--- end action document ---`)
  return parts.join('\n\n') + '\n'
}
