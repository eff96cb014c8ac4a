/**
 * The pull requests of `--land pr` in `helix status --remote <name>` (SPEC 20.5):
 * one row per pull-request claim on the remote — bead, URL, age, checks
 * (pending / passing / failing), mergeable — asked of the forge (gh, or
 * HELIX_PR_COMMAND). A forge that does not answer leaves checks and mergeable
 * `unknown`; status never fails for it.
 */
import {commandForge} from '../forge/command.js'
import {ghForge} from '../forge/gh.js'
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

export async function prRows(claims: RemoteClaim[], titleOf: (bead: string) => string, o: {root: string; env: NodeJS.ProcessEnv; now: Date}): Promise<PrRow[]> {
  const prs = claims.filter((c) => c.message?.pr_url)
  if (prs.length === 0) return []
  const cmd = o.env.HELIX_PR_COMMAND?.trim()
  const forge = cmd ? commandForge(cmd, {cwd: o.root, env: o.env}) : ghForge({cwd: o.root, env: o.env})
  return Promise.all(
    prs.map(async (c): Promise<PrRow> => {
      const url = c.message?.pr_url as string
      const v = await forge.view(url).catch(() => null)
      const opened = c.message ? Date.parse(c.message.claimed_at) : NaN
      return {
        bead: c.bead,
        title: titleOf(c.bead),
        url,
        host: c.message?.host ?? null,
        age_s: Number.isNaN(opened) ? null : Math.round((o.now.getTime() - opened) / 1000),
        state: v?.state ?? 'unknown',
        checks: v?.checks ?? 'unknown',
        mergeable: v?.mergeable ?? 'unknown',
      }
    }),
  )
}

export function renderPrRows(rows: PrRow[], span: (s: number) => string): string[] {
  if (rows.length === 0) return []
  const lines = [`pull requests awaiting merge: ${rows.length}`]
  for (const r of rows) {
    const age = r.age_s === null ? '' : `age ${span(r.age_s)}, `
    lines.push(`  ${sanitize(r.bead)} ${sanitize(r.url)} (${age}checks ${r.checks}, ${r.mergeable}${r.state !== 'open' ? `, ${r.state}` : ''})${r.title ? `: ${sanitize(r.title).slice(0, 60)}` : ''}`)
  }
  return lines
}
