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
 */
import {copyFile, mkdir, readdir, rm} from 'node:fs/promises'
import {existsSync} from 'node:fs'
import path from 'node:path'
import type {LandOptions, LandResult, LoopLanding, Workspace} from '../loop/ports.js'
import {firstLine, gitEnv} from '../git/run.js'
import {openRepo} from '../git/repo.js'
import {branchName, worktreeRel} from '../git/names.js'
import {runScript} from '../proc/process.js'
import {sandboxArgv, sandboxEnv, shellQuote, type SandboxSpec} from '../proc/sandbox.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {SandboxAttempts} from './sandbox-attempts.js'

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

  /**
   * The attempt's work into helix's worktree: leftovers committed in the sandbox,
   * the branch fetched (upload-pack confined, objects checked), the worktree
   * fast-forwarded. Returns null, or why the work could not be taken.
   */
  async function collect(sw: Workspace): Promise<string | null> {
    const wt = worktrees.get(key(sw))
    const a = o.attempts.get(sw.bead, sw.attempt)
    if (!wt || !a || !existsSync(a.clone)) return null
    return collectFrom(a.clone, await topOf(wt.dir), sw)
  }

  async function collectFrom(clone: string, top: string, sw: {bead: string; attempt: number; branch: string}): Promise<string | null> {
    const msg = `helix: uncommitted work of ${sw.bead} attempt ${sw.attempt}`
    const script = 'git add -A && { git diff --cached --quiet || git commit -q -m "$1"; }'
    const argv = confined(clone, ['/bin/sh', '-c', script, 'sh', msg])
    const left = await runScript(argv[0], {cwd: clone, args: argv.slice(1), env: sandboxEnv(o.spec, o.env), timeoutSec: o.timeoutSec})
    if (left.code !== 0) return `a hook refused the commit of the work left uncommitted: ${sanitize(left.output.trim().split('\n').pop() ?? '')}`
    const uploadPack = confined(clone, ['git', 'upload-pack']).map(shellQuote).join(' ')
    const f = await run(['-c', 'protocol.file.allow=always', '-c', 'transfer.fsckObjects=true', 'fetch', '-q', '--no-tags', '--no-recurse-submodules', `--upload-pack=${uploadPack}`, '--', clone, `refs/heads/${sw.branch}`], top)
    if (f.code !== 0) return `could not take the work back from the sandbox: ${sanitize(firstLine(f))}`
    const sha = (await run(['rev-parse', '--verify', '-q', 'FETCH_HEAD^{commit}'], top)).stdout.trim()
    if (!sha) return 'could not take the work back from the sandbox: nothing fetched'
    const head = (await run(['rev-parse', '--verify', '-q', 'HEAD'], top)).stdout.trim()
    if (sha === head) return null
    if ((await run(['merge-base', '--is-ancestor', head, sha], top)).code !== 0) return "the attempt's branch no longer starts at its base (history rewritten in the sandbox)"
    const m = await run(['merge', '-q', '--ff-only', sha], top)
    return m.code === 0 ? null : `could not take the work back from the sandbox: ${sanitize(firstLine(m))}`
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
      // the work is back in helix's own worktree: the land check runs there (confined when the landing confines it);
      // a conflict is not sent back to the agent, whose clone is gone (recorded in docs/decisions.md)
      const r = await inner.land(wt, {...opts, repair: false})
      await cleanup(sw)
      return r
    },
    async preserve(sw: Workspace, reason: string): Promise<string | null> {
      const wt = real(sw)
      const why = await collect(sw)
      if (why) log(`helix: ${sanitize(sw.bead)}: ${why}`)
      const ref = await inner.preserve(wt, reason)
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
