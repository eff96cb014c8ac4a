// The one git helper of the rig: git with the test's isolation (no global or system
// config, C locale, a scrubbed environment), a repository on `main` with one commit, and
// a bare remote with host clones. The area helpers (landing/helpers.ts, remote/helpers.ts,
// landing/crash-helpers.ts) re-export these under their old names.
import {spawnSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {makeTempDir} from './tmp.js'

/** what every git call of a test (and the CLI runs next to it) gets on top of testEnv */
export const GIT_ISOLATION = {GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'} as const

/**
 * the environment of the tests' own git calls (and of the forge stand-in): the runner's
 * environment plus GIT_ISOLATION. Not scrubbed like testEnv: the pr tests' forge merge
 * failed with the scrubbed one (left for a later session to explain); the CLI gets testEnv.
 */
export const gitEnv: NodeJS.ProcessEnv = {...process.env, ...GIT_ISOLATION}

/** `git <args>` in `cwd`: trimmed stdout; throws with git's stderr when it fails */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {cwd, env: gitEnv, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024})
  if (r.error) throw r.error
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}) exited ${String(r.status ?? r.signal)}: ${r.stderr.trim()}`)
  return r.stdout.trim()
}

/** `arg` quoted for sh: inside single quotes, where only a single quote needs escaping */
const shQuote = (arg: string): string => `'${arg.replaceAll("'", "'\\''")}'`

/**
 * Several git commands in `cwd`, in order, from ONE process start: `sh -c 'git … && git …'`.
 * A start forked from a vitest worker (a large process) costs ~5–8 ms of CPU, one forked from
 * sh well under one, so a set-up of three git commands costs a third. Stops at the first that
 * fails (throwing with its stderr); returns the trimmed stdout of the last (the others' is dropped).
 * For the rig's own fixed sequences: the arguments are quoted, but nothing untrusted belongs here.
 */
export function gitSeq(cwd: string, ...cmds: string[][]): string {
  const script = cmds.map((c, i) => `git ${c.map(shQuote).join(' ')}${i < cmds.length - 1 ? ' >/dev/null' : ''}`).join(' && ')
  const r = spawnSync('sh', ['-c', script], {cwd, env: gitEnv, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024})
  if (r.error) throw r.error
  if (r.status !== 0) throw new Error(`${cmds.map((c) => `git ${c.join(' ')}`).join('; ')} (in ${cwd}) exited ${String(r.status ?? r.signal)}: ${r.stderr.trim()}`)
  return r.stdout.trim()
}

/** write `files` (path → text) under `dir`, making parent directories */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [f, t] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), {recursive: true})
    writeFileSync(path.join(dir, f), t)
  }
}

/** the git commands of `initRepo`, for a gitSeq that goes on with more */
function initSteps(who: {name: string; email: string}, message: string): string[][] {
  return [['init', '-q', '-b', 'main'], ['config', 'user.email', who.email], ['config', 'user.name', who.name], ['add', '-A'], ['commit', '-q', '--allow-empty', '-m', message]]
}

/**
 * `git init -b main` in `dir` with an identity, then one commit of everything in it (an empty one
 * when it is empty): five git commands from one start (gitSeq; each start from a vitest worker
 * costs ~5–8 ms of CPU, and the suite makes hundreds of repositories).
 */
export function initRepo(dir: string, who = {name: 'Operator', email: 'op@example.com'}, message = 'initial'): void {
  gitSeq(dir, ...initSteps(who, message))
}

export interface Remote {
  /** the temp directory holding remote.git, seed/ and the clones */
  dir: string
  /** the bare repository (branch main) */
  bare: string
  /** a clone of the bare repository as `dir/<name>`, with `<name>` as its git identity */
  clone(name: string): string
}

/** a bare repository `remote.git` on branch main whose one commit holds `beads` as .ddx/beads.jsonl (plus `files`) */
export function bareRemote(beads: Array<Record<string, unknown>> = [], files: Record<string, string> = {}, prefix = 'helix-remote-'): Remote {
  const dir = makeTempDir(prefix)
  const bare = path.join(dir, 'remote.git')
  const seed = path.join(dir, 'seed')
  mkdirSync(seed)
  writeFiles(seed, {'.ddx/beads.jsonl': beads.map((b) => JSON.stringify(b) + '\n').join(''), 'README.md': 'fleet\n', ...files})
  // the seed's commit, then a local bare clone of it (objects hard-linked), all from one start: `init
  // --bare` and a push took two more, and the push its own receive-pack, pack and hook processes;
  // the bare repository's `origin` (the seed) is never used
  gitSeq(seed, ...initSteps({name: 'Seed', email: 'seed@example.com'}, 'seed'), ['clone', '-q', '--bare', seed, bare])
  return {dir, bare, clone: (name) => cloneOf(bare, path.join(dir, name), name)}
}

/** clone `bare` into `dir` with `name` as its git identity (set by the clone itself: one git start, not three) */
export function cloneOf(bare: string, dir: string, name: string): string {
  git(path.dirname(dir), 'clone', '-q', '-c', `user.email=${name}@example.com`, '-c', `user.name=${name}`, bare, dir)
  return dir
}
