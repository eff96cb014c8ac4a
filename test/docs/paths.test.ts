import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

// Docs drift (issue 19): every repository file a document names must exist.
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
/** paths that appear as examples of what an agent is doing, not as files of this repository */
const EXAMPLES = new Set(['src/parser.ts'])
/** files that were removed but that decisions.md (a log, appended to, never rewritten) still names where it records why they were made */
const REMOVED = new Set(['src/cli/direct.ts', 'src/cli/direct-core.ts', 'src/cli/exit-code.ts', 'test/operator/direct.e2e.test.ts'])
/** files that were moved or renamed (their new paths are in docs/architecture.md); decisions.md still names them where it records why they were made */
const MOVED = new Set([
  'src/status/',
  'src/app/land-base.ts',
  'src/app/merge-driver.ts',
  'src/app/notify.ts',
  'src/app/oneshot.ts',
  'src/app/sandbox-oneshot.ts',
  'src/app/tracker-bead.ts',
  'src/app/tracker-report.ts',
  'src/app/pr-resolve.ts',
  'src/status/doctor-check.ts',
  'src/app/land-check.ts',
  'src/app/landing.ts',
  'src/app/pr-landing.ts',
  'src/app/pr-shared.ts',
  'src/app/pr-state-base.ts',
  'src/app/pr-sweep.ts',
  'src/app/pr-tracker.ts',
  'src/app/preserve-work.ts',
  'src/app/remote-fleet-types.ts',
  'src/app/remote-fleet.ts',
  'src/app/remote-landing.ts',
  'src/app/remote-leftovers.ts',
  'src/app/remote-tracker.ts',
  'src/app/repair-check.ts',
  'src/app/sandbox-attempts.ts',
  'src/app/sandbox-landing.ts',
  'src/agents/health.ts',
  'src/agents/probe.ts',
  'src/loop/health.ts',
  'src/loop/lines.ts',
  'src/loop/supervisor.ts',
  'src/proc/probe.ts',
  'src/remote/claims.ts',
  'src/report/history.ts',
  'src/state/history.ts',
  'src/status/compact.ts',
  'src/status/control.ts',
  'src/status/doctor-remote.ts',
  'src/status/doctor.ts',
  'src/status/fleet-command.ts',
  'src/status/fleet.ts',
  'src/status/model.ts',
  'src/status/next.ts',
  'src/status/pr-status.ts',
  'src/status/report.ts',
  'src/status/review-preflight.ts',
  'src/status/text.ts',
  'src/status/tracker-view.ts',
  'src/status/unblock.ts',
  'src/status/watch.ts',
  'src/tracker/spend-of.ts',
  'src/tracker/spend.ts',
  'src/util/base-command.ts',
])
const docs = [...readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), 'README.md']

/** `src/…`, `test/…`, `scripts/…` paths in a document (placeholders and globs are not files) */
export function namedPaths(text: string): string[] {
  const out = new Set<string>()
  for (const m of text.matchAll(/(?<![\w./-])((?:src|test|scripts)\/[\w./-]*[\w/])/g)) {
    const p = m[1]
    const next = text[(m.index ?? 0) + p.length]
    if (next === '*' || next === '<' || next === '{') continue // a glob or a placeholder: `test/**/*.e2e.test.ts`, `src/commands/<name>.ts`
    out.add(p)
  }
  return [...out]
}

/** architecture.md's folder table: the files a `src/<folder>/` row names by their bare name */
export function folderTableFiles(text: string): string[] {
  const out: string[] = []
  for (const line of text.split('\n')) {
    const row = /^\| `(src\/[\w/]+\/)` \|(.*)\|\s*$/.exec(line)
    if (!row) continue
    for (const m of row[2].matchAll(/`([\w.-]+\.(?:ts|mjs))`/g)) out.push(row[1] + m[1])
    for (const m of row[2].matchAll(/`([\w-]+\/[\w.-]+\.ts)`/g)) out.push(row[1] + m[1])
  }
  return out
}

describe('docs name only files that exist', () => {
  it.each(docs)('%s', (doc) => {
    const text = readFileSync(path.join(repo, doc), 'utf8')
    const missing = namedPaths(text).filter((p) => !EXAMPLES.has(p) && !(doc === 'docs/decisions.md' && (REMOVED.has(p) || MOVED.has(p))) && !existsSync(path.join(repo, p)))
    expect(missing, `${doc} names files that do not exist`).toEqual([])
  })

  it('architecture.md: every file its folder table names is in that folder', () => {
    const named = folderTableFiles(readFileSync(path.join(repo, 'docs', 'architecture.md'), 'utf8'))
    expect(named.length).toBeGreaterThan(40)
    expect(named.filter((p) => !existsSync(path.join(repo, p)))).toEqual([])
  })

  it('architecture.md: every src/ folder has a row in the folder table', () => {
    const text = readFileSync(path.join(repo, 'docs', 'architecture.md'), 'utf8')
    const folders = readdirSync(path.join(repo, 'src')).filter((f) => statSync(path.join(repo, 'src', f)).isDirectory())
    expect(folders.filter((f) => !text.includes(`| \`src/${f}/\` |`))).toEqual([])
  })

  it('the scanner finds paths and skips globs and placeholders (a check that cannot pass vacuously)', () => {
    expect(namedPaths('see `src/loop/attempt.ts` and src/nope/gone.ts, not `test/**/*.e2e.test.ts` or `src/commands/<name>.ts`')).toEqual(['src/loop/attempt.ts', 'src/nope/gone.ts'])
    expect(folderTableFiles('| `src/loop/` | `attempt.ts` (x), `gone.ts` |')).toEqual(['src/loop/attempt.ts', 'src/loop/gone.ts'])
  })
})
