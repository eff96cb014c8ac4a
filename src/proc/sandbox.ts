/**
 * The bubblewrap sandbox (SPEC 21): the argv that runs a command confined, the
 * environment it keeps, and the probe that says whether bwrap works here.
 *
 * The file system is read-only; `/tmp` and the operator's home are replaced by
 * empty ones (home read-only, /tmp private and writable); what the command
 * needs under them is bound back afterwards; the attempt's own directories are
 * bound writable. Mounts are ordered by depth so a deeper bind always lands on
 * top of a shallower tmpfs or bind (a later `--tmpfs /tmp` would hide an earlier
 * bind under /tmp). Hidden paths go last, and win.
 */
import {spawnSync} from 'node:child_process'
import {closeSync, existsSync, openSync, realpathSync, statSync, writeSync} from 'node:fs'
import path from 'node:path'

export interface SandboxSpec {
  /** 'none' unshares the network (`--sandbox-network none`) */
  network: 'on' | 'none'
  /** config `sandboxWritable`: extra paths bound writable (`~/` means the operator's home) */
  writable: string[]
  /** config `sandboxReadable`: extra paths bound read-only (visible even under home or /tmp) */
  readable: string[]
  /** config `sandboxHidden`: paths replaced by an empty directory (or /dev/null for a file) */
  hidden: string[]
  /** config `sandboxEnv`: extra variable names kept (`NAME`, or `PREFIX_*`) */
  env: string[]
}

export const DEFAULT_SANDBOX: SandboxSpec = {network: 'on', writable: [], readable: [], hidden: [], env: []}

export interface SandboxPlace {
  /** the command's working directory */
  cwd: string
  /** directories (or files) the command writes: the clone, the tracker copy */
  rw: string[]
  /** directories it reads that may lie under /tmp or home: the project root, the agent's install, helix itself */
  ro: string[]
  /** the operator's environment (HOME and PATH are read from it) */
  env: NodeJS.ProcessEnv
  /** paths inside a writable one that stay read-only (a one-shot's `.git` in the writable checkout) */
  roOver?: string[]
}

/** the agents' own state: writable, with their configuration files read-only (SPEC 21.1) */
const STATE_DIRS = ['.codex', '.claude', '.claude.json']
const STATE_CONFIG = ['.claude/settings.json', '.claude/CLAUDE.md', '.codex/config.toml', '.codex/AGENTS.md']
/** what a sealed config file holds when helix has to make it: nothing an agent would read as an instruction */
const SEALED_TEXT: Record<string, string> = {'.claude/settings.json': '{}\n'}
const ALWAYS_HIDDEN = ['/run/user', '/var/run/docker.sock', '/run/docker.sock']
const KEPT_NAMES = new Set(['PATH', 'HOME', 'LANG', 'TERM', 'TZ'])
const KEPT_PREFIXES = ['LC_', 'HELIX_', 'DDX_', 'ANTHROPIC_', 'CLAUDE_', 'OPENAI_', 'CODEX_']

/** the bwrap binary: HELIX_BWRAP (tests point it at a missing file) or `bwrap` on PATH */
export function bwrapBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env.HELIX_BWRAP?.trim() || 'bwrap'
}

/** SPEC 21.1: PATH, HOME, LANG/LC_*, TERM, TZ, HELIX_*, DDX_*, the agents' own keys and `sandboxEnv`; nothing else */
export function sandboxEnv(spec: SandboxSpec, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const extraNames = new Set(spec.env.filter((n) => !n.endsWith('*')))
  const extraPrefixes = spec.env.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1))
  const keep = (k: string): boolean => KEPT_NAMES.has(k) || extraNames.has(k) || [...KEPT_PREFIXES, ...extraPrefixes].some((p) => k.startsWith(p))
  const out: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined && keep(k)) out[k] = v
  return out
}

const depth = (p: string): number => p.split('/').filter(Boolean).length
const under = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`)
const expand = (p: string, home: string | null): string => (p === '~' && home ? home : p.startsWith('~/') && home ? path.join(home, p.slice(2)) : path.resolve(p))

function real(p: string): string | null {
  try {
    return realpathSync(p)
  } catch {
    return null
  }
}

/**
 * The agents' configuration files are bound read-only (SPEC 21.1), also before they
 * exist: otherwise an agent could create `~/.claude/settings.json` (hooks) in its
 * writable state directory, and it would run later, outside the sandbox. A bind needs
 * a file to bind over, and bwrap would make a 0-byte, mode 0444 one in the operator's
 * home itself; helix makes it instead, a harmless one (`{}` for settings.json, empty
 * for the others), mode 0600, only where the state directory exists, never over a file.
 * Returns the files to bind read-only.
 */
export function sealAgentConfig(home: string, stateDirs: string[]): string[] {
  const out: string[] = []
  for (const rel of STATE_CONFIG) {
    const file = path.join(home, rel)
    const dir = path.dirname(file)
    if (!stateDirs.some((d) => under(dir, d))) continue
    let isDir = false
    try {
      isDir = statSync(dir).isDirectory()
    } catch {
      continue
    }
    if (!isDir) continue
    if (!existsSync(file)) {
      try {
        const fd = openSync(file, 'wx', 0o600)
        try {
          writeSync(fd, SEALED_TEXT[rel] ?? '')
        } finally {
          closeSync(fd)
        }
      } catch {
        // made meanwhile (another slot), or the directory refused it: bound if it exists below
      }
    }
    if (existsSync(file)) out.push(file)
  }
  return out
}

type Mount = {kind: 'tmpfs'; at: string} | {kind: 'ro' | 'rw'; at: string}

/**
 * The directories an executable needs: its own, and its real location's (an npm
 * `bin/` link points into a package; the whole `node_modules/` it lives in is bound).
 */
export function executableDirs(file: string): string[] {
  if (!path.isAbsolute(file)) return []
  const out = [path.dirname(file)]
  const r = real(file)
  if (r) {
    const nm = r.lastIndexOf('/node_modules/')
    out.push(nm >= 0 ? r.slice(0, nm + '/node_modules'.length) : path.dirname(r))
  }
  return out
}

/**
 * The full argv that runs `argv` confined: `[bwrap, …options, …argv]`. Pass the
 * environment of `sandboxEnv` to the spawn. Exported for every place that runs
 * the agent's code (the runner, the acceptance gate, the leftover commit, the
 * land check).
 */
export function sandboxArgv(spec: SandboxSpec, argv: string[], place: SandboxPlace): string[] {
  const home = place.env.HOME && path.isAbsolute(place.env.HOME) && path.resolve(place.env.HOME) !== '/' && existsSync(place.env.HOME) ? path.resolve(place.env.HOME) : null
  const mounts: Mount[] = [{kind: 'tmpfs', at: '/tmp'}]
  if (home && home !== '/tmp') mounts.push({kind: 'tmpfs', at: home})
  // what the sandbox's own mounts hide, so a directory helix needs there is bound back: the
  // private /tmp and home, and /dev (`--dev` mounts a fresh one with only the device nodes,
  // so a project or helix's shim on a tmpfs such as /dev/shm would vanish)
  const covered = (p: string): boolean => under(p, '/tmp') || under(p, '/dev') || (home !== null && under(p, home))
  const seen = new Set<string>()
  const add = (kind: 'ro' | 'rw', p: string): void => {
    const at = path.resolve(p)
    if (seen.has(`${kind}:${at}`) || !existsSync(at)) return
    seen.add(`${kind}:${at}`)
    mounts.push({kind, at})
  }
  // read-only binds are needed only where a tmpfs hides the real file system
  const pathDirs = (place.env.PATH ?? '').split(':').filter((d) => path.isAbsolute(d))
  for (const p of [...pathDirs, ...place.ro]) if (covered(path.resolve(p))) add('ro', p)
  for (const p of spec.readable) add('ro', expand(p, home))
  const writableDirs: string[] = []
  if (home) for (const d of STATE_DIRS) writableDirs.push(path.join(home, d))
  for (const p of spec.writable) writableDirs.push(expand(p, home))
  for (const p of [...writableDirs, ...place.rw]) add('rw', p)
  for (const p of place.roOver ?? []) add('ro', p)
  // a config file under a writable state directory is read-only, existing or not
  if (home) for (const f of sealAgentConfig(home, writableDirs.filter((d) => existsSync(d)))) add('ro', f)
  // shallow first; at one depth a tmpfs first, then read-only, then writable (a writable dir wins over the same path read-only)
  const order = {tmpfs: 0, ro: 1, rw: 2}
  mounts.sort((a, b) => depth(a.at) - depth(b.at) || order[a.kind] - order[b.kind])
  const args = [bwrapBinary(place.env), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']
  for (const m of mounts) {
    if (m.kind === 'tmpfs') args.push('--tmpfs', m.at)
    else args.push(m.kind === 'ro' ? '--ro-bind' : '--bind', m.at, m.at)
  }
  for (const h of [...ALWAYS_HIDDEN, ...spec.hidden.map((p) => expand(p, home))]) {
    if (!existsSync(h)) continue
    let dir = false
    try {
      dir = statSync(h).isDirectory()
    } catch {
      continue
    }
    if (dir) args.push('--tmpfs', h)
    else args.push('--ro-bind', '/dev/null', h)
  }
  if (home && home !== '/tmp') args.push('--remount-ro', home)
  args.push('--chdir', place.cwd, '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--new-session', '--die-with-parent', '--cap-drop', 'ALL')
  if (spec.network === 'none') args.push('--unshare-net')
  return [...args, ...argv]
}

/**
 * A `confine` for calls outside an attempt: the command's cwd is its only writable
 * directory (the review preflight's throw-away project); `readable` are the paths
 * under /tmp or home it needs (helix, its shim, node).
 */
export function confineAt(spec: SandboxSpec, readable: string[]): (argv: string[], env: NodeJS.ProcessEnv, cwd: string) => {argv: string[]; env: NodeJS.ProcessEnv} {
  return (argv, env, cwd) => ({argv: sandboxArgv(spec, argv, {cwd, rw: [cwd], ro: [...readable, ...executableDirs(argv[0])], env}), env: sandboxEnv(spec, env)})
}

export type SandboxProbe = {ok: true} | {ok: false; message: string}

/**
 * Whether bwrap works here (SPEC 21.2): one confined `true`. The message names
 * what is missing and how to install or enable it.
 */
export function probeSandbox(spec: SandboxSpec = DEFAULT_SANDBOX, env: NodeJS.ProcessEnv = process.env): SandboxProbe {
  const argv = sandboxArgv(spec, ['true'], {cwd: '/', rw: [], ro: [], env: {PATH: env.PATH, HOME: env.HOME, HELIX_BWRAP: env.HELIX_BWRAP}})
  const r = spawnSync(argv[0], argv.slice(1), {stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 20_000, env: sandboxEnv(spec, env)})
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT')
    return {ok: false, message: `--sandbox needs bubblewrap (${argv[0]}), which is not installed here; install it with 'apt-get install bubblewrap' (Debian/Ubuntu) or your system's bubblewrap package`}
  if (r.status === 0) return {ok: true}
  const why = (r.stderr ?? '').split('\n').map((l) => l.trim()).find(Boolean) ?? (r.error ? r.error.message : `exit ${r.status ?? 'signal'}`)
  return {
    ok: false,
    message: `--sandbox: bubblewrap cannot create its namespaces here (${why.replace(/[^\x20-\x7e]/g, '?').slice(0, 160)}); enable unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0) or run helix where they are allowed`,
  }
}

/** POSIX shell quoting of one word (for git's `--upload-pack`, which git runs through a shell) */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}
