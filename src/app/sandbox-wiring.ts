/**
 * `helix run --sandbox` (SPEC 21): the options, the refusal where bubblewrap
 * cannot work, and the wiring that confines every agent call and everything
 * else that runs the agent's code.
 *
 * - every dispatch gets a `confine` (the runner execs bwrap under its watchdog);
 *   a dispatch in an attempt's clone edits that attempt's tracker copy, and its
 *   edits are taken back (fenced) as soon as it ends;
 * - the acceptance gate runs the clone's scripts confined;
 * - the review threshold's change count is read by a confined git;
 * - the landing is decorated (landing/sandbox.ts): clone, collect, land.
 */
import {execFile} from 'node:child_process'
import {runScript} from '../proc/process.js'
import {confineGitHooks} from '../proc/confined-hooks.js'
import {projectPaths} from '../util/root.js'
import {existsSync} from 'node:fs'
import path from 'node:path'
import {executableDirs, probeSandbox, sandboxArgv, sandboxEnv, type SandboxSpec} from '../proc/sandbox.js'
import type {LandCheckSpec} from '../landing/land-check.js'
import {helixReadable, preflightConfine} from '../agents/confine.js'
import {HelixError, EXIT} from '../util/errors.js'
import {createSandboxAttempts, type SandboxAttempts} from '../landing/sandbox-attempts.js'
import {sandboxLanding} from '../landing/sandbox.js'
import {dispatchInClone, WRITING_ACTIONS} from './sandbox-actions.js'
import type {RealLoop} from './wiring.js'

export {preflightConfine}

/** SPEC 21.2: one line naming what is missing and how to get it; exit 1, before anything is claimed */
export function refuseWithoutSandbox(spec: SandboxSpec, env: NodeJS.ProcessEnv): void {
  const p = probeSandbox(spec, env)
  if (!p.ok) throw new HelixError(`helix: ${p.message}`, EXIT.ERROR)
}

/** `env` with git's hooks run confined (proc/confined-hooks.ts), for every git this run starts outside the sandbox */
export function confineHooks(cwd: string, spec: SandboxSpec, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const root = projectPaths(cwd, env).root
  return confineGitHooks(root, spec, env, [root, ...helixReadable()])
}

function exec(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{code: number; stdout: string}> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), {cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024}, (error, stdout) => {
      resolve({code: error ? (typeof (error as {code?: unknown}).code === 'number' ? (error as {code: number}).code : 1) : 0, stdout: stdout ?? ''})
    })
  })
}

const OWN = ['.ddx/', '.helix/', '.helix-logs/']

/** the change of an attempt since `mark`, read by git inside the sandbox (the clone's config is the agent's) */
async function confinedChange(spec: SandboxSpec, attempts: SandboxAttempts, clone: string, dir: string, mark: string, env: NodeJS.ProcessEnv): Promise<{lines: number; files: number} | null> {
  const place = {cwd: dir, rw: [], ro: [clone, ...attempts.readable()], env}
  const diff = await exec(sandboxArgv(spec, ['git', 'diff', '--numstat', mark, '--'], place), dir, sandboxEnv(spec, env))
  if (diff.code !== 0) return null
  let lines = 0
  let files = 0
  for (const row of diff.stdout.split('\n')) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/.exec(row)
    if (!m || OWN.some((o) => m[3].startsWith(o))) continue
    files++
    lines += (m[1] === '-' ? 0 : Number(m[1])) + (m[2] === '-' ? 0 : Number(m[2]))
  }
  const others = await exec(sandboxArgv(spec, ['git', 'ls-files', '-o', '--exclude-standard', '-z'], place), dir, sandboxEnv(spec, env))
  // untracked files count as files; their lines are not read (docs/sandbox.md)
  if (others.code === 0) files += others.stdout.split('\0').filter((f) => f && !OWN.some((o) => f.startsWith(o))).length
  return {lines, files}
}

/** Confines the run: every agent call, the acceptance gate, the change count, the landing. */
export function attachSandbox(real: RealLoop, spec: SandboxSpec, env: NodeJS.ProcessEnv, timeoutSec: number): SandboxAttempts {
  const {deps, paths} = real
  const attempts = createSandboxAttempts(spec, paths, env)
  const confine = attempts.confine
  const dispatch = deps.agents.dispatch
  deps.agents.dispatch = async (a) => {
    const at = attempts.at(a.cwd ?? paths.root)
    // SPEC 21.1: check writes nothing; a writing drain action gets a clone of its own and lands like an attempt
    if (!at && a.action === 'check') return dispatch({...a, confine: attempts.confineReadOnly})
    // (with --remote a drain action has no claim to land under: it stays confined in the root as before)
    if (!at && WRITING_ACTIONS.has(a.action) && deps.landing && !deps.landing.remote) return dispatchInClone(a, {dispatch, landing: deps.landing, attempts, deps})
    // a call in an attempt's clone files into that attempt's tracker copy (the real one is read-only there)
    const res = await dispatch({...a, ...(at ? {env: {...(a.env ?? {}), DDX_BEAD_DIR: at.trackerDir}} : {}), confine})
    if (at) await attempts.takeBack(at)
    return res
  }
  const gates = deps.gates
  deps.gates = {
    ...gates,
    async runScript(file, cwd) {
      const root = paths.root
      const rel = file.startsWith(`${root}/`) ? file.slice(root.length + 1) : null
      const target = cwd && rel ? `${cwd}/${rel}` : file
      const c = confine([target], env, cwd ?? root)
      const r = await runScript(c.argv[0], {cwd: cwd ?? root, args: c.argv.slice(1), env: c.env, timeoutSec})
      return r.code
    },
    async changedSince(mark, dir) {
      const at = dir ? attempts.at(dir) : undefined
      if (!at || !dir) return gates.changedSince(mark, dir)
      return mark ? confinedChange(spec, attempts, at.clone, dir, mark, env) : null
    },
  }
  if (deps.landing) deps.landing = sandboxLanding(deps.landing, {root: paths.root, trackerFile: paths.file, spec, env, attempts, readable: attempts.readable(), timeoutSec, log: (line) => deps.out.normal(line)})
  // SPEC 20.0: with --sandbox every attempt has a workspace of its own, also with one worker
  deps.alwaysWorktree = true
  return attempts
}

/**
 * SPEC 20.3: the land check's confinement under --sandbox: its worktree (cwd) writable, the
 * rest read-only, and the worktree's `.git` file too. helix's own git runs in that worktree
 * afterwards, outside the sandbox: a check that rewrote `.git` to a repository of its own
 * making (its config's `core.fsmonitor` a script of its choosing) ran that script outside.
 */
export function checkConfine(spec: SandboxSpec, attempts: SandboxAttempts): NonNullable<LandCheckSpec['confine']> {
  const readable = attempts.readable()
  return (argv, env, cwd) => {
    const dotGit = path.join(cwd, '.git')
    return {argv: sandboxArgv(spec, argv, {cwd, rw: [cwd], ro: [...readable, ...executableDirs(argv[0])], env, roOver: existsSync(dotGit) ? [dotGit] : []}), env: sandboxEnv(spec, env)}
  }
}
