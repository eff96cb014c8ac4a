/**
 * A pull request whose opener died before its claim took the URL (SPEC 20.5 with 19.4):
 * a host killed between `gh pr create` and the claim's rewrite leaves an open pull
 * request on `helix/<id>` under a plain claim that expires. Without this, the host that
 * takes the claim over runs the agent again and force-pushes its redo over the finished
 * work under review. Instead, each look of the sweep asks the forge about the branch of
 * every other host's expired plain claim, and when an open pull request is there the
 * claim is rewritten (compare-and-set at its value) to carry `pr_url` with no expiry:
 * the bead awaits that merge like any other. This host's own claims are left to the
 * restart's reconcile, which finishes the attempt from its worktree (SPEC 18.2, 20.2).
 */
import type {ClaimMessage, RemoteClaim} from '../remote/claim-refs.js'
import type {RemoteBase} from '../remote/base.js'
import type {Fleet} from '../remote/fleet.js'
import {refLine} from '../remote/push.js'
import {sanitize} from '../util/sanitize.js'
import type {Forge} from '../forge/types.js'
import {NO_EXPIRY, prBranch} from './pr-shared.js'

export interface AdoptOptions {
  remote: string
  host: string
  fleet: Fleet
  plain: RemoteBase
  forge: Forge
  now: () => Date
  log: (line: string) => void
}

/** the claims of a look, with those whose open pull request was adopted rewritten to carry it */
export async function adoptOrphanPrs(o: AdoptOptions, list: RemoteClaim[]): Promise<RemoteClaim[]> {
  const now = o.now()
  const out: RemoteClaim[] = []
  for (const c of list) {
    const m = c.message
    const orphan = m !== null && !m.pr_url && m.host !== o.host && !o.fleet.held.has(c.bead) && now.getTime() >= c.expiresAt.getTime()
    out.push(orphan ? ((await adopt(o, c, m)) ?? c) : c)
  }
  return out
}

async function adopt(o: AdoptOptions, c: RemoteClaim, m: ClaimMessage): Promise<RemoteClaim | null> {
  const v = await o.forge.view(prBranch(c.bead))
  if (v?.state !== 'open') return null
  const msg: ClaimMessage = {...m, expires_at: NO_EXPIRY, pr_url: v.url}
  const tree = (await o.plain.git(['hash-object', '-t', 'tree', '-w', '/dev/null'])).stdout.trim()
  const commit = (await o.plain.git(['commit-tree', '-m', JSON.stringify(msg), tree])).stdout.trim()
  if (!commit) return null
  const p = await o.plain.push([`--force-with-lease=${c.ref}:${c.sha}`, o.remote, `${commit}:${c.ref}`], false)
  if (!p.ok) {
    // another host took the claim or adopted it first: the next look sees what it made
    o.log(`helix: the claim on ${sanitize(c.bead)} could not take its open pull request ${sanitize(v.url)} (${sanitize(refLine(p, c.ref)?.summary ?? p.message)})`)
    return null
  }
  o.log(`helix: ${sanitize(c.bead)}'s pull request ${sanitize(v.url)} was opened by ${sanitize(m.host)}, which stopped before its claim took it: it awaits merge (its work is not redone)`)
  return {...c, sha: commit, message: msg}
}
