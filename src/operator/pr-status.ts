/**
 * The pull requests of `--land pr` in `helix status --remote <name>` (SPEC 20.5):
 * one row per pull-request claim on the remote — bead, URL, age, checks
 * (pending / passing / failing), mergeable — asked of the forge (gh, or the
 * `pr-command` of the environment or the project's config). A forge that does not
 * answer leaves checks and mergeable `unknown`; status never fails for it. Plain
 * `helix status` and `helix report` show the pull requests a `--land pr` run saw
 * last (`.helix/pull-requests.json`); every reader asks the forge at most once a
 * minute per pull request and shares what it learned through that file.
 */
import {configuredEnv} from '../config/project-config.js'
import {commandForge} from '../forge/command.js'
import {ghForge} from '../forge/gh.js'
import {readPrCache, refreshPrs, writePrCache, type SeenPr} from '../forge/pr-cache.js'
import type {Forge} from '../forge/types.js'
import type {RemoteClaim} from '../remote/claim-refs.js'
import {sanitize} from '../util/sanitize.js'

export interface PrRow {
  bead: string
  title: string
  url: string
  host: string | null
  age_s: number | null
  state: 'open' | 'merged' | 'closed' | 'unknown'
  checks: 'pending' | 'passing' | 'failing' | 'none' | 'unknown'
  mergeable: 'mergeable' | 'conflicting' | 'unknown'
}

/** the forge status asks: `HELIX_PR_COMMAND`, else the config file's `pr-command`, else gh */
export function forgeFor(root: string, env: NodeJS.ProcessEnv): Forge {
  const e = configuredEnv(env, root)
  const cmd = e.HELIX_PR_COMMAND?.trim()
  return cmd ? commandForge(cmd, {cwd: root, env}) : ghForge({cwd: root, env})
}

function toRow(p: SeenPr, now: Date, title: string): PrRow {
  const opened = p.opened_at ? Date.parse(p.opened_at) : NaN
  return {bead: p.bead, title: title || p.title, url: p.url, host: p.host, age_s: Number.isNaN(opened) ? null : Math.round((now.getTime() - opened) / 1000), state: p.state, checks: p.checks, mergeable: p.mergeable}
}

/** `status --remote`: one row per pull-request claim on the remote */
export async function prRows(claims: RemoteClaim[], titleOf: (bead: string) => string, o: {root: string; env: NodeJS.ProcessEnv; now: Date; closedAtTip?: (bead: string) => boolean}): Promise<PrRow[]> {
  const prs = claims.filter((c) => c.message?.pr_url)
  if (prs.length === 0) return []
  const cached = new Map((readPrCache(o.root) ?? []).map((p) => [p.url, p]))
  const seen = prs.map((c): SeenPr => {
    const url = c.message?.pr_url as string
    const old = cached.get(url)
    // the bead's close reaches the base only with the merge: a row seen open before is asked again at once
    if (old && old.bead === c.bead && old.state === 'open' && o.closedAtTip?.(c.bead)) return {...old, seen_at: null}
    return old && old.bead === c.bead ? old : {bead: c.bead, url, title: titleOf(c.bead), host: c.message?.host ?? null, opened_at: c.message?.claimed_at ?? null, state: 'unknown', checks: 'unknown', mergeable: 'unknown', seen_at: null}
  })
  const r = await refreshPrs(seen, () => forgeFor(o.root, o.env), o.now)
  if (r.changed) await writePrCache(o.root, r.prs)
  return r.prs.map((p) => toRow(p, o.now, titleOf(p.bead)))
}

/**
 * Plain `helix status` and `helix report`: the pull requests the last `--land pr` look
 * saw here, still open; null when no `--land pr` run ever wrote the file (nothing to show).
 */
export async function localPrRows(root: string, env: NodeJS.ProcessEnv, now: Date, titleOf: (bead: string) => string = () => ''): Promise<PrRow[] | null> {
  const prs = readPrCache(root)
  if (prs === null) return null
  const r = await refreshPrs(prs, () => forgeFor(root, env), now)
  if (r.changed) await writePrCache(root, r.prs)
  return r.prs.filter((p) => p.state === 'open' || p.state === 'unknown').map((p) => toRow(p, now, titleOf(p.bead)))
}

/** the pull requests that need a person: a failing check or a conflict with the base */
export const prNeedsYou = (rows: PrRow[]): Array<{id: string; why: string}> =>
  rows.filter((r) => r.checks === 'failing' || r.mergeable === 'conflicting').map((r) => ({id: r.bead, why: `pull request ${r.url}: ${[r.checks === 'failing' ? 'checks failing' : '', r.mergeable === 'conflicting' ? 'conflicts with the base' : ''].filter(Boolean).join(', ')}`}))

/** an age as `42s`, `7m`, `3h` */
export const prAge = (s: number): string => (s < 90 ? `${Math.round(s)}s` : s < 5400 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`)

export function renderPrRows(rows: PrRow[], span: (s: number) => string = prAge): string[] {
  if (rows.length === 0) return []
  // merged or closed ones keep their claim until a --land pr run's next look: shown, not counted as awaiting
  const awaiting = rows.filter((r) => r.state === 'open' || r.state === 'unknown').length
  const lines = [awaiting === rows.length ? `pull requests awaiting merge: ${rows.length}` : `pull requests: ${rows.length} (${awaiting} awaiting merge; the others are cleared at the next --land pr run's look)`]
  for (const r of rows) {
    const age = r.age_s === null ? '' : `age ${span(r.age_s)}, `
    lines.push(`  ${sanitize(r.bead)} ${sanitize(r.url)} (${age}checks ${r.checks}, ${r.mergeable}${r.state !== 'open' ? `, ${r.state}` : ''})${r.title ? `: ${sanitize(r.title).slice(0, 60)}` : ''}`)
  }
  return lines
}
