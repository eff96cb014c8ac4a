/**
 * `--sandbox` attempts (SPEC 21.1): a decorator around the real `LoopLanding`.
 *
 * `prepare` makes the usual worktree (helix's own, never the agent's), and beside
 * it a private clone (`git clone --shared`: the project's objects as a read-only
 * alternate) on the same branch `helix/<id>-<n>`, plus a copy of the tracker
 * holding the claim. The agent gets the clone as its cwd and the copy as its
 * DDX_BEAD_DIR; both are the only project paths it may write.
 *
 * Before landing, preserving or keeping the branch, the work is collected:
 * leftover changes are committed in the clone INSIDE the sandbox (its hooks are
 * the agent's), then helix fetches that one branch with `transfer.fsckObjects`
 * into its own worktree. The fetch's other side, `git upload-pack`, runs inside
 * the sandbox too, so nothing of the clone's config, hooks or `.git` runs outside.
 * The worktree is fast-forwarded to what was fetched, and the real landing does
 * the rest. helix never runs git in the clone outside the sandbox.
 *
 * SPEC 20.4: a conflict or a red land check found there goes back to the agent in
 * its clone (sandbox-repair.ts): the clone is kept while the repair is pending, and
 * removed only when the attempt ends (landed, preserved, branch kept).
 */
import {copyFile, mkdir, readFile, readdir, rm, writeFile} from 'node:fs/promises'
import {existsSync} from 'node:fs'
import path from 'node:path'
import type {LandOptions, LandResult, LoopLanding, PreserveOptions, Repair, Workspace} from '../loop/ports.js'
import {firstLine, gitEnv} from '../git/run.js'
import {openRepo} from '../git/repo.js'
import {branchName, touchesTracker, worktreeRel} from '../git/names.js'
import {runScript} from '../proc/process.js'
import {sandboxArgv, sandboxEnv, shellQuote, type SandboxSpec} from '../proc/sandbox.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {SandboxAttempts} from './sandbox-attempts.js'
import {ABORT_STOPPED, createSandboxRepair} from './sandbox-repair.js'

export interface SandboxLandingOptions {
  root: string
  /** the run's tracker file (`.ddx/beads.jsonl`): copied, with the claim, for the agent */
  trackerFile: string
  spec: SandboxSpec
  env: NodeJS.ProcessEnv
  attempts: SandboxAttempts
  /** read-only paths the confined git needs (the project root, helix, node) */
  readable: string[]
  timeoutSec: number
  log?: (line: string) => void
}

const key = (ws: {bead: string; attempt: number}): string => `${ws.bead}-${ws.attempt}`

export function sandboxLanding(inner: LoopLanding, o: SandboxLandingOptions): LoopLanding {
  const root = path.resolve(o.root)
  const log = o.log ?? (() => {})
  /** the real worktree behind each sandboxed workspace */
  const worktrees = new Map<string, Workspace>()
  const genv = gitEnv(o.env)
  const run = openRepo(root, genv).run

  /** the worktree's top: `ws.dir` less the root's prefix inside the repository */
  async function topOf(dir: string): Promise<string> {
    const r = await run(['rev-parse', '--show-toplevel'], dir)
    return r.code === 0 ? r.stdout.trim() : dir
  }

  async function identity(): Promise<{name: string; email: string}> {
    const name = (await run(['config', 'user.name'], root)).stdout.trim() || 'helix'
    const email = (await run(['config', 'user.email'], root)).stdout.trim() || 'helix@localhost'
    return {name, email}
  }

  async function prepare(bead: string, attempt: number, slot: number, meta?: Record<string, unknown>): Promise<Workspace> {
    const ws = await inner.prepare(bead, attempt, slot, meta)
    const k = key(ws)
    const base = path.join(root, '.helix', 'sandbox')
    const clone = path.join(base, k)
    const trackerDir = path.join(base, `${k}.tracker`)
    try {
      await rm(clone, {recursive: true, force: true})
      await rm(trackerDir, {recursive: true, force: true})
      await mkdir(base, {recursive: true})
      const wtTop = await topOf(ws.dir)
      const prefix = path.relative(wtTop, ws.dir)
      const top = (await run(['rev-parse', '--show-toplevel'], root)).stdout.trim()
      const c = await run(['clone', '-q', '--shared', '--no-tags', '--single-branch', '-b', ws.branch, '--', top, clone], root)
      if (c.code !== 0) throw new Error(`git clone for the sandbox failed: ${sanitize(firstLine(c))}`)
      // the sandbox's home is empty: the clone carries the operator's identity for the agent's commits
      const who = await identity()
      await run(['config', 'user.name', who.name], clone)
      await run(['config', 'user.email', who.email], clone)
      await mkdir(trackerDir, {recursive: true})
      const copy = path.join(trackerDir, path.basename(o.trackerFile))
      // --remote: the landing made the attempt's own tracker (19.2, the claim in it); the copy is made from that one
      const from = ws.trackerDir ? path.join(ws.trackerDir, path.basename(o.trackerFile)) : o.trackerFile
      if (existsSync(from)) await copyFile(from, copy)
      const sw: Workspace = {...ws, dir: path.resolve(clone, prefix || '.'), trackerDir}
      worktrees.set(k, ws)
      await o.attempts.add({bead: ws.bead, attempt: ws.attempt, clone, dir: sw.dir, trackerDir, trackerFile: copy, ...(ws.trackerDir ? {target: ws.trackerDir} : {})})
      return sw
    } catch (error) {
      await rm(clone, {recursive: true, force: true})
      await rm(trackerDir, {recursive: true, force: true})
      await inner.preserve(ws, 'the sandbox could not be made')
      throw error
    }
  }

  /** runs `argv` confined with the clone writable (the leftover commit, the upload-pack) */
  function confined(clone: string, argv: string[]): string[] {
    return sandboxArgv(o.spec, argv, {cwd: clone, rw: [clone], ro: [root, ...o.readable], env: o.env})
  }

  /** a shell script run confined in the clone (its git is the agent's: config, hooks, `.git`) */
  async function confinedSh(clone: string, script: string, args: string[]): Promise<{code: number; output: string}> {
    const argv = confined(clone, ['/bin/sh', '-c', script, 'sh', ...args])
    const r = await runScript(argv[0], {cwd: clone, args: argv.slice(1), env: sandboxEnv(o.spec, o.env), timeoutSec: o.timeoutSec})
    return {code: r.code, output: r.output}
  }
  const sandboxRepair = createSandboxRepair(confinedSh)

  /**
   * The attempt's work into helix's worktree: leftovers committed in the sandbox,
   * the branch fetched (upload-pack confined, objects checked), the worktree
   * fast-forwarded. With `rewriteOnto` (after a resolve, SPEC 20.4) a rewritten
   * history is taken too when it descends from that base tip: the worktree's branch
   * is moved to it. Returns null, or why the work could not be taken.
   */
  async function collect(sw: Workspace, rewriteOnto?: string): Promise<string | null> {
    const wt = worktrees.get(key(sw))
    const a = o.attempts.get(sw.bead, sw.attempt)
    if (!wt || !a || !existsSync(a.clone)) return null
    return collectFrom(a.clone, await topOf(wt.dir), sw, rewriteOnto ? {onto: rewriteOnto, tracker: wt.trackerDir ? path.join(wt.trackerDir, path.basename(o.trackerFile)) : null} : undefined)
  }

  /**
   * The paths `sha` adds since `since` that the operator's checkout ignores (`.helix/`,
   * `node_modules/`, `.env`…), or none. A fast-forward overwrites an untracked ignored
   * file without a word: a force-added `.helix/config.json` turned the next run's
   * sandbox off, a `node_modules/.bin/` file would run at the operator's next test.
   */
  async function ignoredAdditions(since: string, sha: string, top: string): Promise<string[]> {
    const d = await run(['diff', '--name-only', '-z', '--no-renames', '--diff-filter=A', since, sha], top)
    const added = d.stdout.split('\0').filter(Boolean)
    if (d.code !== 0 || added.length === 0) return []
    const rootTop = (await run(['rev-parse', '--show-toplevel'], root)).stdout.trim() || root
    const out: string[] = []
    for (let i = 0; i < added.length; i += 500) {
      // (-z needs --stdin; a name git quotes is still a name to show)
      const c = await run(['check-ignore', '--no-index', '--', ...added.slice(i, i + 500)], rootTop)
      out.push(...c.stdout.split('\n').filter(Boolean))
    }
    return out
  }

  /**
   * What the work from `since` to `sha` may not carry, or null. The landing refuses the
   * tracker too, but only after helix's worktree took it: a tracker turned into a symlink
   * would be in helix's way there (its copy with --remote).
   */
  async function forbidden(since: string, sha: string, top: string): Promise<string | null> {
    const tracker = (await run(['diff', '--name-only', '-z', '--no-renames', since, sha], top)).stdout.split('\0').filter((f) => f && touchesTracker(f))
    if (tracker.length > 0) return `the attempt's commits touch the tracker (${sanitize([...new Set(tracker)].slice(0, 3).join(', '))}); commits must never carry .ddx/`
    const ignored = await ignoredAdditions(since, sha, top)
    if (ignored.length > 0)
      return `the attempt's commits add paths your checkout ignores (${sanitize(ignored.slice(0, 3).join(', '))}${ignored.length > 3 ? ', …' : ''}); landing them would overwrite untracked files there`
    return null
  }

  async function collectFrom(clone: string, top: string, sw: {bead: string; attempt: number; branch: string}, rewrite?: {onto: string; tracker: string | null}): Promise<string | null> {
    const msg = `helix: uncommitted work of ${sw.bead} attempt ${sw.attempt}`
    // a rebase a resolve (or a crash) left stopped is aborted first: the branch still names the work from before it
    const script = `${ABORT_STOPPED}\ngit add -A && { git diff --cached --quiet || git commit -q -m "$1"; }`
    const left = await confinedSh(clone, script, [msg])
    if (left.code !== 0) return `a hook refused the commit of the work left uncommitted: ${sanitize(left.output.trim().split('\n').pop() ?? '')}`
    const uploadPack = confined(clone, ['git', 'upload-pack']).map(shellQuote).join(' ')
    const f = await run(['-c', 'protocol.file.allow=always', '-c', 'transfer.fsckObjects=true', 'fetch', '-q', '--no-tags', '--no-recurse-submodules', `--upload-pack=${uploadPack}`, '--', clone, `refs/heads/${sw.branch}`], top)
    if (f.code !== 0) return `could not take the work back from the sandbox: ${sanitize(firstLine(f))}`
    const sha = (await run(['rev-parse', '--verify', '-q', 'FETCH_HEAD^{commit}'], top)).stdout.trim()
    if (!sha) return 'could not take the work back from the sandbox: nothing fetched'
    const head = (await run(['rev-parse', '--verify', '-q', 'HEAD'], top)).stdout.trim()
    if (sha === head) return null
    if ((await run(['merge-base', '--is-ancestor', head, sha], top)).code !== 0) {
      if (!rewrite || (await run(['merge-base', '--is-ancestor', rewrite.onto, sha], top)).code !== 0) return "the attempt's branch no longer starts at its base (history rewritten in the sandbox)"
      // a resolve rebased the work onto `onto`: what it adds is what follows that tip
      return (await forbidden(rewrite.onto, sha, top)) ?? moveWorktree(top, sha, rewrite.tracker)
    }
    // what the fetch adds to helix's worktree (the base's own changes since the attempt began are not the agent's)
    const bad = await forbidden(head, sha, top)
    if (bad) return bad
    const m = await run(['merge', '-q', '--ff-only', sha], top)
    return m.code === 0 ? null : `could not take the work back from the sandbox: ${sanitize(firstLine(m))}`
  }

  /**
   * `fn` on helix's worktree with the worktree's own tracker copy (--remote) out of
   * git's way: that file is not the branch's and stays as it is, but git refuses to
   * abort a rebase over a skip-worktree file that differs from what it must write.
   */
  async function keepingTrackerCopy<T>(top: string, tracker: string | null, fn: () => Promise<T>): Promise<T> {
    const rel = tracker ? path.relative(top, tracker) : null
    const kept = tracker && rel && !rel.startsWith('..') && existsSync(tracker) ? await readFile(tracker) : null
    const skip = kept && rel ? (await run(['ls-files', '-v', '--', rel], top)).stdout.startsWith('S ') : false
    if (skip && rel) {
      await run(['update-index', '--no-skip-worktree', '--', rel], top)
      await run(['checkout', '-q', 'HEAD', '--', rel], top)
    }
    try {
      return await fn()
    } finally {
      if (kept && tracker) await writeFile(tracker, kept)
      if (skip && rel) await run(['update-index', '--skip-worktree', '--', rel], top)
    }
  }

  /** SPEC 20.4: helix's own worktree (never the operator's checkout) moved to the resolved history */
  async function moveWorktree(top: string, sha: string, tracker: string | null): Promise<string | null> {
    const m = await keepingTrackerCopy(top, tracker, () => run(['reset', '-q', '--hard', sha], top))
    return m.code === 0 ? null : `could not take the resolved work back from the sandbox: ${sanitize(firstLine(m))}`
  }

  async function cleanup(sw: Workspace): Promise<void> {
    const a = o.attempts.get(sw.bead, sw.attempt)
    worktrees.delete(key(sw))
    if (!a) return
    await o.attempts.remove(sw.bead, sw.attempt)
    try {
      await rm(a.clone, {recursive: true, force: true})
      await rm(a.trackerDir, {recursive: true, force: true})
    } catch (error) {
      log(`helix: could not remove the sandbox of ${sanitize(sw.bead)}: ${sanitize(errorMessage(error))}`)
    }
  }

  const real = (sw: Workspace): Workspace => worktrees.get(key(sw)) ?? sw

  /**
   * SPEC 20.4: the situation the inner landing left in helix's worktree, put into
   * the agent's clone (confined). A conflict: the worktree's stopped rebase is
   * aborted (its branch back on the attempt's work) and the clone's branch rebased
   * onto the same tip, stopping on the same conflict. A red check: the clone's branch
   * moved to the candidate checked. The clone stays until the attempt ends. Returns
   * null, or why the repair cannot go to the agent.
   */
  async function giveToClone(wt: Workspace, clone: string, repair: Repair): Promise<string | null> {
    const top = await topOf(wt.dir)
    const tracker = wt.trackerDir ? path.join(wt.trackerDir, path.basename(o.trackerFile)) : null
    if (repair.kind === 'conflict') await keepingTrackerCopy(top, tracker, () => run(['rebase', '--abort'], top))
    const candidate = (await run(['rev-parse', '--verify', '-q', 'HEAD'], top)).stdout.trim()
    return sandboxRepair.sendBack(clone, wt.branch, repair, candidate)
  }

  /**
   * SPEC 18.2 with --sandbox: a run that died left clones behind. At the next start
   * (no other run owns them) each clone's work is collected into its worktree, so
   * reconciliation finds it there as after any --workers crash; then the clone and
   * its tracker copy go. A clone without its worktree has nothing to land into.
   */
  async function collectLeftClones(): Promise<void> {
    const base = path.join(root, '.helix', 'sandbox')
    let names: string[] = []
    try {
      names = await readdir(base)
    } catch {
      return
    }
    for (const name of names) {
      const m = /^(.+)-(\d+)$/.exec(name)
      const wt = path.join(root, worktreeRel(m?.[1] ?? name, Number(m?.[2] ?? 0)))
      if (m && existsSync(wt)) {
        const why = await collectFrom(path.join(base, name), wt, {bead: m[1], attempt: Number(m[2]), branch: branchName(m[1], Number(m[2]))})
        if (why) log(`helix: the sandbox of ${sanitize(m[1])} attempt ${m[2]} left by an earlier run: ${why}`)
      }
      await rm(path.join(base, name), {recursive: true, force: true})
    }
  }

  return {
    ...inner,
    prepare,
    ...(inner.leftovers
      ? {
          leftovers: async () => {
            await collectLeftClones()
            return inner.leftovers!()
          },
        }
      : {}),
    async land(sw: Workspace, opts?: LandOptions): Promise<LandResult> {
      const wt = real(sw)
      const why = await collect(sw)
      if (why) {
        const ref = await inner.preserve(wt, why)
        await cleanup(sw)
        return {landed: false, reason: why, preservedRef: ref}
      }
      // the work is back in helix's own worktree: the land check runs there (confined when the landing confines it).
      // SPEC 20.4: a conflict or a red check goes back to the agent in its clone (a leftover adopted without one: not landed)
      const a = o.attempts.get(sw.bead, sw.attempt)
      const canRepair = opts?.repair === true && a !== undefined && existsSync(a.clone) && worktrees.has(key(sw))
      const r = await inner.land(wt, {...opts, repair: canRepair})
      if (!r.landed && r.repair && a) {
        const lost = await giveToClone(wt, a.clone, r.repair)
        if (!lost) return r
        const ref = await inner.preserve(wt, lost)
        await cleanup(sw)
        return {landed: false, reason: lost, preservedRef: ref}
      }
      await cleanup(sw)
      return r
    },
    ...(inner.verifyRepair
      ? {
          /**
           * SPEC 20.4 after a resolve in the clone: its state read by a confined git, its
           * work collected (a history rewritten onto the base tip included), then the
           * inner landing's checks on helix's worktree (markers, descends, leftovers)
           */
          async verifyRepair(sw: Workspace, repair: Repair): Promise<string | null> {
            const a = o.attempts.get(sw.bead, sw.attempt)
            if (!a || !existsSync(a.clone) || !worktrees.has(key(sw))) return "the attempt's sandbox is gone"
            const bad = await sandboxRepair.cloneState(a.clone, sw.branch)
            if (bad) return bad
            const why = await collect(sw, repair.onto)
            if (why) return why
            return inner.verifyRepair!(real(sw), repair)
          },
        }
      : {}),
    ...(inner.commitsOf ? {commitsOf: (sw: Workspace, onto: string) => inner.commitsOf!(real(sw), onto)} : {}),
    async preserve(sw: Workspace, reason: string, popts?: PreserveOptions): Promise<string | null> {
      const wt = real(sw)
      const why = await collect(sw)
      if (why) log(`helix: ${sanitize(sw.bead)}: ${why}`)
      const ref = await inner.preserve(wt, reason, popts)
      await cleanup(sw)
      return ref
    },
    async keepBranch(sw: Workspace): Promise<string> {
      const wt = real(sw)
      const why = await collect(sw)
      if (why) log(`helix: ${sanitize(sw.bead)}: ${why}`)
      const b = await inner.keepBranch(wt)
      await cleanup(sw)
      return b
    },
  }
}
