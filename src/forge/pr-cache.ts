/**
 * The pull requests of `--land pr` as last seen (SPEC 20.5), in
 * `<root>/.helix/pull-requests.json`: written by a run's sweep after every look
 * and by whoever asked the forge since (status, report, the dashboard through
 * them), so that one pull request costs at most one forge call a minute however
 * many panes show it. The file is helix's own runtime data; what it holds came
 * from the forge and is untrusted: read defensively, sanitized when shown.
 */
import {lstatSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {atomicWrite} from '../util/atomic-write.js'
import type {Forge, PrChecks, PrMergeable} from './types.js'

/** a pull request's view is asked of the forge at most once in this window */
export const PR_CACHE_TTL_MS = 60_000
const MAX_ROWS = 500

export interface SeenPr {
  bead: string
  url: string
  title: string
  host: string | null
  /** when the pull request was opened (its claim's time) */
  opened_at: string | null
  state: 'open' | 'merged' | 'closed' | 'unknown'
  checks: PrChecks | 'unknown'
  mergeable: PrMergeable
  /** when the forge was last asked (null: never) */
  seen_at: string | null
}

export const prCacheFile = (root: string): string => path.join(root, '.helix', 'pull-requests.json')

const str = (v: unknown, max = 500): string | null => (typeof v === 'string' && v.length > 0 ? v.slice(0, max) : null)
const oneOf = <T extends string>(v: unknown, words: readonly T[], def: T): T => (words.includes(v as T) ? (v as T) : def)

/** the rows of the file; null when there is none (no `--land pr` run here yet), [] when it is unreadable */
export function readPrCache(root: string): SeenPr[] | null {
  const file = prCacheFile(root)
  try {
    // a regular file only: never a FIFO or a link someone put there
    if (!lstatSync(file).isFile()) return []
  } catch {
    return null
  }
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as {prs?: unknown}
    if (!Array.isArray(data.prs)) return []
    const out: SeenPr[] = []
    for (const p of data.prs.slice(0, MAX_ROWS)) {
      if (!p || typeof p !== 'object') continue
      const o = p as Record<string, unknown>
      const bead = str(o.bead, 200)
      const url = str(o.url)
      if (!bead || !url) continue
      out.push({
        bead,
        url,
        title: str(o.title, 200) ?? '',
        host: str(o.host, 200),
        opened_at: str(o.opened_at, 60),
        state: oneOf(o.state, ['open', 'merged', 'closed', 'unknown'] as const, 'unknown'),
        checks: oneOf(o.checks, ['pending', 'passing', 'failing', 'none', 'unknown'] as const, 'unknown'),
        mergeable: oneOf(o.mergeable, ['mergeable', 'conflicting', 'unknown'] as const, 'unknown'),
        seen_at: str(o.seen_at, 60),
      })
    }
    return out
  } catch {
    return []
  }
}

/** best effort: a cache that cannot be written only costs another forge call later */
export async function writePrCache(root: string, prs: SeenPr[]): Promise<void> {
  try {
    await atomicWrite(prCacheFile(root), JSON.stringify({version: 1, prs: prs.slice(0, MAX_ROWS)}, null, 1) + '\n')
  } catch {
    // the directory is gone or read-only: nothing to do
  }
}

export const isFresh = (p: Pick<SeenPr, 'seen_at'>, now: Date): boolean => p.seen_at !== null && now.getTime() - Date.parse(p.seen_at) < PR_CACHE_TTL_MS

/**
 * Asks the forge about every open (or never answered) pull request whose view is
 * older than a minute; a forge that does not answer is not asked again within the
 * minute either. Returns the rows and whether any changed.
 */
export async function refreshPrs(prs: SeenPr[], forge: () => Forge, now: Date): Promise<{prs: SeenPr[]; changed: boolean}> {
  let f: Forge | null = null
  let changed = false
  const out = await Promise.all(
    prs.map(async (p): Promise<SeenPr> => {
      if ((p.state !== 'open' && p.state !== 'unknown') || isFresh(p, now)) return p
      f ??= forge()
      changed = true
      const v = await f.view(p.url).catch(() => null)
      const seen_at = now.toISOString()
      return v ? {...p, state: v.state, checks: v.checks, mergeable: v.mergeable, seen_at} : {...p, seen_at}
    }),
  )
  return {prs: out, changed}
}
