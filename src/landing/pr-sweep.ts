/**
 * The look at every pull-request claim on the remote, whichever host made it
 * (SPEC 20.5), at start and then every `--pr-poll` seconds:
 *  - merged: the claim ref is deleted (compare-and-delete at its value) and so is
 *    helix's branch; the bead's close reached the base with the merge.
 *  - closed without merge: the branch tip is kept on `refs/helix/preserved/<id>/<n>`
 *    (pushed create-only), the failure is counted (refs/helix/state) with a note
 *    quoting the closing comment, then the claim goes: the bead is free again.
 *  - open and conflicting with the base: the branch is rebased in a scratch worktree,
 *    the tracker merged by bead id (the merge driver's own merge), and pushed again
 *    (forced, to helix/<id> only). A conflict outside the tracker, or a failing
 *    required check, goes to the resolve integration point; without one the pull
 *    request stays for a person, said once.
 */
import {existsSync} from 'node:fs'
import {mkdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {firstLine} from '../git/run.js'
import {idProblem, preservedRefName} from '../git/names.js'
import type {RemoteClaim} from '../remote/claim-refs.js'
import type {RemoteBase} from '../remote/base.js'
import {refLine} from '../remote/push.js'
import {mergeTracker} from '../tracker/merge.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {Forge, PrView} from '../forge/types.js'
import type {Fleet} from '../remote/fleet.js'
import {prBranch, type ResolveRound} from './pr-shared.js'

export interface OpenPr {
  bead: string
  url: string
  host: string
  openedAt: string
  view: PrView | null
}

export interface SweepOptions {
  root: string
  remote: string
  base: string
  trackerRel: string
  scratch: string
  fleet: Fleet
  plain: RemoteBase
  forge: Forge
  now: () => Date
  log: (line: string) => void
  /** a note on the bead (refs/helix/state) */
  note: (bead: string, text: string) => Promise<void>
  resolve?: ResolveRound
}

export interface Sweep {
  /** one look at every pull-request claim; returns how many beads changed state (merged or freed) */
  run(): Promise<number>
  /** the pull requests seen open at the last look */
  open(): OpenPr[]
  /** pull requests left for a person (said once), for the blocker report */
  stuck(): Map<string, string>
  /** a pull request this run just opened (counted until the next look finds it) */
  opened(pr: OpenPr): void
}

export function createSweep(o: SweepOptions): Sweep {
  const g = (args: string[], cwd = o.root) => o.plain.git(args, cwd)
  let openPrs: OpenPr[] = []
  const stuck = new Map<string, string>()
  const rebasedAt = new Map<string, string>()
  const t = () => o.now().toISOString().slice(11, 19)

  async function remoteBranchSha(bead: string): Promise<string | null> {
    const r = await g(['ls-remote', o.remote, `refs/heads/${prBranch(bead)}`])
    return r.code === 0 ? (r.stdout.split('\t')[0]?.trim() || null) : null
  }

  async function deleteBranch(bead: string, sha: string | null): Promise<void> {
    if (!sha) return
    const ref = `refs/heads/${prBranch(bead)}`
    await o.plain.push([`--force-with-lease=${ref}:${sha}`, o.remote, `:${ref}`])
  }

  async function merged(c: RemoteClaim, v: PrView): Promise<void> {
    const r = await o.fleet.claims.release(c.bead, c.sha)
    if (!r.ok) return
    await deleteBranch(c.bead, await remoteBranchSha(c.bead))
    o.log(`helix: [${t()}] merged ${sanitize(c.bead)} (${sanitize(v.url)}${v.mergeCommit ? `, ${sanitize(v.mergeCommit.slice(0, 12))}` : ''})`)
  }

  async function closed(c: RemoteClaim, v: PrView): Promise<void> {
    const sha = await remoteBranchSha(c.bead)
    let kept: string | null = null
    if (sha) {
      let n = Math.max(1, c.message?.attempt ?? 1)
      while ((await g(['rev-parse', '--verify', '-q', preservedRefName(c.bead, n)])).code === 0) n++
      kept = preservedRefName(c.bead, n)
      const f = await g(['fetch', '-q', '--no-tags', o.remote, `refs/heads/${prBranch(c.bead)}:${kept}`])
      if (f.code === 0) await o.plain.push([`--force-with-lease=${kept}:`, o.remote, `${kept}:${kept}`], false)
      else kept = null
    }
    const quote = v.lastComment ? `: "${v.lastComment.replace(/\s+/g, ' ').slice(0, 300)}"` : ' (no comment)'
    const reason = `pull request ${v.url} was closed without merge${quote}`
    // counted and noted before the claim goes, so no host picks the bead up before its backoff is there
    await o.fleet.endAttempt(c.bead, {reason, count: true})
    await o.note(c.bead, `PR CLOSED [${o.now().toISOString()}]: ${reason}${kept ? `; its work is kept at ${kept}` : ''}`)
    const r = await o.fleet.claims.release(c.bead, c.sha)
    if (!r.ok) return
    await deleteBranch(c.bead, sha)
    o.log(`helix: [${t()}] pull request for ${sanitize(c.bead)} closed without merge${sanitize(quote)}; ${sanitize(c.bead)} is free again${kept ? ` (work kept at ${sanitize(kept)})` : ''}`)
  }

  function once(bead: string, why: string): void {
    if (stuck.get(bead) === why) return
    stuck.set(bead, why)
    o.log(`helix: [${t()}] ${sanitize(bead)}: ${sanitize(why)}; the pull request stays for a person`)
  }

  /** rebase helix/<id> onto the base tip in a scratch worktree; the tracker merged by bead id */
  async function rebase(c: RemoteClaim, v: PrView): Promise<void> {
    const head = await remoteBranchSha(c.bead)
    const tip = await o.plain.fetch()
    if (!head || !tip || rebasedAt.get(c.bead) === `${head}:${tip}`) return
    rebasedAt.set(c.bead, `${head}:${tip}`)
    const local = `refs/helix/pr-rebase/${c.bead}`
    if ((await g(['fetch', '-q', '--no-tags', o.remote, `+refs/heads/${prBranch(c.bead)}:${local}`])).code !== 0) return
    const dir = path.join(o.scratch, `pr-rebase-${c.bead}-${process.pid}`)
    await mkdir(o.scratch, {recursive: true})
    if (existsSync(dir)) await g(['worktree', 'remove', '--force', '--force', dir])
    await rm(dir, {recursive: true, force: true})
    try {
      if ((await g(['worktree', 'add', '-q', '--detach', dir, local])).code !== 0) return
      const fork = (await g(['merge-base', local, tip])).stdout.trim()
      const attrs = path.join(o.scratch, 'pr-attributes')
      const {writeFile} = await import('node:fs/promises')
      await writeFile(attrs, `${o.trackerRel} merge=helix-keep\n`)
      const rb = await g(['-c', `core.attributesFile=${attrs}`, '-c', 'merge.helix-keep.driver=true', '-c', 'merge.helix-beads.driver=true', 'rebase', '-q', '--no-autostash', tip], dir)
      if (rb.code !== 0) {
        const files = (await g(['diff', '--name-only', '--diff-filter=U'], dir)).stdout.split('\n').filter(Boolean)
        // INTEGRATION POINT (SPEC 20.4): a resolve round in this worktree
        const ok = o.resolve && files.length ? await o.resolve({dir, bead: c.bead, baseTip: tip, files, why: 'conflict'}) : false
        if (!ok) {
          await g(['rebase', '--abort'], dir)
          return once(c.bead, `conflict with ${o.base} in ${files.slice(0, 5).join(', ') || firstLine(rb)}`)
        }
      }
      // the tracker: three-way by bead id (19.3), the branch's edits onto the base's
      const show = async (rev: string) => Buffer.from((await g(['cat-file', 'blob', `${rev}:${o.trackerRel}`])).stdout)
      const merged = mergeTracker({base: await show(fork), ours: await show(tip), theirs: await show(local)}).buf.toString('utf8')
      const rebased = (await g(['rev-parse', 'HEAD'], dir)).stdout.trim()
      const next = merged === (await o.plain.trackerAt(rebased)) ? rebased : await o.plain.trackerCommit(rebased, merged, `helix: tracker of ${c.bead} merged onto ${o.base}`)
      const ref = `refs/heads/${prBranch(c.bead)}`
      const p = await o.plain.push([`--force-with-lease=${ref}:${head}`, o.remote, `${next}:${ref}`])
      if (!p.ok) return o.log(`helix: [${t()}] the rebased ${prBranch(c.bead)} was refused: ${sanitize(refLine(p, ref)?.summary ?? p.message)}`)
      rebasedAt.set(c.bead, `${next}:${tip}`)
      o.log(`helix: [${t()}] rebased ${sanitize(prBranch(c.bead))} onto ${sanitize(o.base)} (${sanitize(v.url)}), pushed again`)
    } finally {
      await g(['worktree', 'remove', '--force', '--force', dir])
      await rm(dir, {recursive: true, force: true})
      await g(['worktree', 'prune'])
      await g(['update-ref', '-d', local])
    }
  }

  async function run(): Promise<number> {
    const list = await o.fleet.claims.list()
    if (!list) return 0
    let changed = 0
    const seen: OpenPr[] = []
    for (const c of list) {
      const url = c.message?.pr_url
      if (!url || idProblem(c.bead)) continue
      let v: PrView | null = null
      try {
        v = await o.forge.view(url)
        if (v?.state === 'merged') {
          await merged(c, v)
          changed++
          continue
        }
        if (v?.state === 'closed') {
          await closed(c, v)
          changed++
          continue
        }
        if (v?.mergeable === 'conflicting') await rebase(c, v)
        // INTEGRATION POINT (SPEC 20.4): a failing required check goes to a resolve round on the branch
        else if (v?.checks === 'failing') once(c.bead, `a required check fails on ${v.url}`)
      } catch (error) {
        o.log(`helix: [${t()}] looking at ${sanitize(url)} failed: ${sanitize(errorMessage(error))}`)
      }
      seen.push({bead: c.bead, url, host: c.message?.host ?? '', openedAt: c.message?.claimed_at ?? '', view: v})
    }
    openPrs = seen
    return changed
  }

  return {
    run,
    open: () => openPrs,
    stuck: () => stuck,
    opened(pr) {
      openPrs = [...openPrs.filter((p) => p.bead !== pr.bead), pr]
    },
  }
}
