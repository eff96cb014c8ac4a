/**
 * One typed git layer: a `Repo` bound to a directory and an
 * environment (fenced as `run.ts` does), whose calls answer with data instead of
 * exit codes. Nothing here throws on git's answers; only a broken spawn is a
 * `code: 127` result.
 *
 * Pushes and fetches come back classified (SPEC 20.1): a `race` is git's own lock
 * or a compare-and-set another writer won (retry after a fetch), `unreachable` is
 * the transport failing (the remote was not reached or read at all), `rejected`
 * is a refusal that belongs to the push itself (a hook, a protected branch), and
 * `conflict` is a directory/file clash with a ref that is in the way (a stray
 * `refs/helix/claims/<id>/x` blocks `refs/helix/claims/<id>` for ever). The
 * message is git's own line, unsanitized: callers sanitize before printing.
 *
 * Every call that writes the clone's shared refs from the remote (fetch, push:
 * both update `refs/remotes/*`) goes through one in-process queue per git common
 * directory, so the workers of one host never collide on git's ref locks.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import {git, type GitResult} from './run.js'

export type {GitResult}

export interface PushedRef {
  flag: string
  from: string
  to: string
  summary: string
}

export type GitFailureKind = 'race' | 'unreachable' | 'rejected' | 'conflict'

export type PushResult =
  | {ok: true; refs: PushedRef[]}
  | {ok: false; kind: GitFailureKind; refs: PushedRef[]; message: string; blockingRef?: string; detail?: string}

export type FetchResult = {ok: true} | {ok: false; kind: GitFailureKind; message: string}

/**
 * refusals that mean another writer won: fetch, rebase, try again (SPEC 20.1). Also a
 * worktree another slot of this clone is adding or removing at that moment: git walks
 * every worktree's HEAD, and a half-made one reads `fatal: bad object worktrees/<x>/HEAD`.
 */
const RACE =
  /non-fast-forward|stale info|fetch first|failed to lock|cannot lock ref|incorrect old value|failed to update ref|unable to create '[^']*\.lock'|is at [0-9a-f]+ but expected|atomic push failed|reference already exists|unable to update local ref|some local refs could not be updated|bad object worktrees\/|worktrees\/[^\s']+\/(?:commondir|gitdir)/i
/** git's words for a remote it could not reach or read */
const TRANSPORT =
  /could not read from remote|does not appear to be a git repository|unable to access|could not resolve host|connection (refused|timed out|reset|closed)|failed to connect|no route to host|network is unreachable|the remote end hung up|early eof|broken pipe|protocol error|permission denied|repository .* not found|host key verification failed|ssh: |operation timed out|couldn't connect|empty reply|unexpected disconnect/i
/** git's message says the transport failed (the remote could not be reached or read), not that it answered no */
export const saysUnreachable = (message: string | null): boolean => message !== null && TRANSPORT.test(message)
/** `cannot lock ref 'A': 'B' exists; cannot create 'A'` (or the reverse): a ref in the way */
const DF = /cannot lock ref '([^']+)': '([^']+)' exists; cannot create '[^']+'|'([^']+)' exists; cannot create '([^']+)'/i

/** git's lines without the porcelain ones, `To …`, `Done` and blank lines */
function messageLines(r: GitResult): string[] {
  return `${r.stderr}\n${r.stdout}`
    .split('\n')
    .map((l) => l.trim().replace(/^remote:\s*/, ''))
    .filter((l) => l && !l.startsWith('To ') && l !== 'Done' && !/^[ +\-*=!]\t/.test(l))
}

/** what the remote itself said (its hooks' words, git's `remote:` lines), at most two lines joined */
function remoteWords(r: GitResult): string {
  return r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('remote:'))
    .map((l) => l.replace(/^remote:\s*/, ''))
    .filter((l) => l !== '')
    .slice(0, 2)
    .join(' ')
}

/** the most telling line: an `error:`/`fatal:` line naming the cause, else the first */
function mainLine(lines: string[], code: number): string {
  const cause = lines.find((l) => DF.test(l) || RACE.test(l) || TRANSPORT.test(l))
  return cause ?? lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? `git exited ${code}`
}

export function parsePushLines(stdout: string): PushedRef[] {
  const refs: PushedRef[] = []
  for (const line of stdout.split('\n')) {
    const m = /^([ +\-*=!])\t([^\t]*)\t(.*)$/.exec(line)
    if (!m) continue
    const [from, ...rest] = (m[2] as string).split(':')
    refs.push({flag: m[1] as string, from: from ?? '', to: rest.join(':'), summary: m[3] as string})
  }
  return refs
}

function blocking(text: string): string | undefined {
  const m = DF.exec(text)
  return m ? (m[2] ?? m[3]) : undefined
}

/** `git push --porcelain` as a typed answer (exported for tests with git's real output) */
export function classifyPush(r: GitResult): PushResult {
  const refs = parsePushLines(r.stdout)
  const rejected = refs.filter((x) => x.flag === '!')
  // every ref the remote was asked about was accepted: a failure after that (the local
  // tracking ref's lock) is the clone's, not the push's; the remote moved
  if (refs.length > 0 && rejected.length === 0) return {ok: true, refs}
  const lines = messageLines(r)
  const all = [...rejected.map((x) => x.summary), ...lines].join('\n')
  const df = blocking(all)
  if (df) return {ok: false, kind: 'conflict', refs, message: mainLine(lines, r.code), blockingRef: df}
  if (rejected.length > 0) {
    const race = rejected.some((x) => RACE.test(x.summary)) || lines.some((l) => RACE.test(l))
    const summary = rejected.find((x) => !/atomic push failed/.test(x.summary))?.summary ?? rejected[0]?.summary ?? ''
    const cause = mainLine(lines, r.code)
    // a race's message is the ref's summary; `detail` keeps git's own line of why (a lock, a hook's words)
    if (race) return {ok: false, kind: 'race', refs, message: summary, ...(cause !== `git exited ${r.code}` ? {detail: `${summary}: ${cause}`} : {})}
    // a refusal by the remote's own rule (a hook, a protected branch): its words say why
    const said = remoteWords(r)
    return {ok: false, kind: 'rejected', refs, message: said ? `${summary}: ${said}` : cause === `git exited ${r.code}` ? summary : `${summary}: ${cause}`}
  }
  if (r.code === 0) return {ok: true, refs}
  return {ok: false, kind: failureKind(lines), refs, message: mainLine(lines, r.code)}
}

function failureKind(lines: string[]): GitFailureKind {
  if (lines.some((l) => TRANSPORT.test(l))) return 'unreachable'
  if (lines.some((l) => DF.test(l))) return 'conflict'
  if (lines.some((l) => RACE.test(l))) return 'race'
  // no ref line and no transport word: a pre-push hook or a local refusal
  if (lines.some((l) => /hook|declined|failed to push some refs/.test(l))) return 'rejected'
  return 'unreachable'
}

/** `git fetch` as a typed answer */
export function classifyFetch(r: GitResult): FetchResult {
  if (r.code === 0) return {ok: true}
  const lines = messageLines(r)
  return {ok: false, kind: failureKind(lines), message: mainLine(lines, r.code)}
}

/** the refs the remote accepted or rejected, by destination */
export const refLine = (p: PushResult, to: string): PushedRef | undefined => p.refs.find((x) => x.to === to)

export interface WorktreeInfo {
  path: string
  branch: string | null
  head: string | null
}

export interface Repo {
  readonly dir: string
  readonly env: NodeJS.ProcessEnv
  /** `git <args>` in `cwd` (default the repo's dir) with extra env; never throws */
  run(args: string[], cwd?: string, extra?: NodeJS.ProcessEnv): Promise<GitResult>
  /** `rev-parse --verify -q <rev>`: the sha, or null */
  revParse(rev: string, cwd?: string): Promise<string | null>
  /** `merge-base --is-ancestor a b` */
  isAncestor(a: string, b: string, cwd?: string): Promise<boolean>
  mergeBase(a: string, b: string): Promise<string | null>
  /** compare-and-set `update-ref [-m message] ref new old` (`old` '' = must not exist; undefined = any) */
  updateRef(ref: string, to: string, old?: string, message?: string): Promise<boolean>
  /** compare-and-delete `update-ref -d ref old` (undefined: whatever it is) */
  deleteRef(ref: string, old?: string): Promise<boolean>
  /** the refs under one or more patterns (`for-each-ref` prefixes or globs), one process */
  /**
   * `for-each-ref` of one or more patterns. With `head`, each ref also says whether it is
   * the HEAD of the worktree this Repo runs in (`%(HEAD)`), which spares a `symbolic-ref`.
   */
  forEachRef(prefix: string | readonly string[], opts?: {head?: boolean}): Promise<Array<{ref: string; sha: string; head?: boolean}>>
  worktreeAdd(dir: string, args: {branch?: string; newBranch?: string; at?: string}): Promise<GitResult>
  worktreeRemove(dir: string): Promise<GitResult>
  worktreeList(): Promise<WorktreeInfo[] | null>
  worktreePrune(): Promise<void>
  /** `git push --porcelain [--no-verify] <args>`, queued with this clone's other remote work */
  push(args: string[], opts?: {hooks?: boolean}): Promise<PushResult>
  /** `git fetch -q --no-tags <args>`, queued; a lost lock race is retried a few times */
  fetch(args: string[]): Promise<FetchResult>
  /** run `fn` in this clone's queue of remote work (fetch, push, tracking-ref updates) */
  serial<T>(fn: () => Promise<T>): Promise<T>
  /** `rev-parse --verify -q <rev>^{commit}`: the commit `rev` names, or null */
  commitOf(rev: string, cwd?: string): Promise<string | null>
  /** `symbolic-ref -q HEAD` in `cwd`: the checked-out branch's full ref name, null when HEAD is detached */
  headRef(cwd?: string): Promise<string | null>
  /**
   * One `rev-parse` in a worktree: whether a rebase is half done there (its
   * `rebase-merge` or `rebase-apply` directory exists), and HEAD's full ref name
   * (null when detached, or when git could not say).
   */
  rebaseState(cwd: string): Promise<{rebasing: boolean; head: string | null}>
  /** `git -C cwd <args>` NUL-separated output (`-z`) as a list, empty on failure */
  names(args: string[], cwd?: string): Promise<string[]>
}

const queues = new Map<string, Promise<unknown>>()

/** an in-process queue per key (the clone's git common directory) */
function enqueue<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = queues.get(key) ?? Promise.resolve()
  const p = prev.then(fn, fn)
  const tail = p.catch(() => {})
  queues.set(key, tail)
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key)
  })
  return p
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A `Repo` on `dir` with `env` (already prepared by `gitEnv`). `queueKey` names the
 * clone for the remote-work queue; two Repos on the same clone must pass the same
 * key (the default is `dir` resolved).
 */
export function openRepo(dir: string, env: NodeJS.ProcessEnv, queueKey = path.resolve(dir)): Repo {
  const run = (args: string[], cwd = dir, extra: NodeJS.ProcessEnv = {}) => git(args, {cwd, env: {...env, ...extra}})
  const serial = <T>(fn: () => Promise<T>) => enqueue(queueKey, fn)
  const sha = (r: GitResult) => (r.code === 0 ? r.stdout.trim() || null : null)
  return {
    dir,
    env,
    run,
    serial,
    revParse: async (rev, cwd) => sha(await run(['rev-parse', '--verify', '-q', rev], cwd)),
    isAncestor: async (a, b, cwd) => (await run(['merge-base', '--is-ancestor', a, b], cwd)).code === 0,
    mergeBase: async (a, b) => sha(await run(['merge-base', a, b])),
    updateRef: async (ref, to, old, message) => (await run(['update-ref', ...(message === undefined ? [] : ['-m', message]), ref, to, ...(old === undefined ? [] : [old])])).code === 0,
    deleteRef: async (ref, old) => (await run(['update-ref', '-d', ref, ...(old === undefined ? [] : [old])])).code === 0,
    async forEachRef(prefix, opts) {
      const format = opts?.head ? '--format=%(objectname) %(refname) %(HEAD)' : '--format=%(objectname) %(refname)'
      const r = await run(['for-each-ref', format, ...(typeof prefix === 'string' ? [prefix] : prefix)])
      return r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [s = '', ref = '', head] = l.split(' ')
          return opts?.head ? {ref, sha: s, head: head === '*'} : {ref, sha: s}
        })
    },
    worktreeAdd: (wt, a) => run(['worktree', 'add', '-q', ...(a.newBranch ? ['-b', a.newBranch] : []), wt, ...(a.branch ? [a.branch] : a.at ? [a.at] : [])]),
    worktreeRemove: (wt) => run(['worktree', 'remove', '--force', '--force', wt]),
    async worktreeList() {
      const r = await run(['worktree', 'list', '--porcelain'])
      if (r.code !== 0) return null
      const out: WorktreeInfo[] = []
      for (const line of r.stdout.split('\n')) {
        if (line.startsWith('worktree ')) out.push({path: line.slice(9), branch: null, head: null})
        const cur = out[out.length - 1]
        if (cur && line.startsWith('branch ')) cur.branch = line.slice(7)
        else if (cur && line.startsWith('HEAD ')) cur.head = line.slice(5)
      }
      return out
    },
    worktreePrune: async () => void (await run(['worktree', 'prune'])),
    push: (args, opts = {}) => serial(async () => classifyPush(await run(['push', '--porcelain', ...(opts.hooks === false ? ['--no-verify'] : []), ...args]))),
    fetch: (args) =>
      serial(async () => {
        let res = classifyFetch(await run(['fetch', '-q', '--no-tags', ...args]))
        // another git process (not ours: ours are queued) held a ref lock: a few short tries
        for (let i = 0; !res.ok && res.kind === 'race' && i < 5; i++) {
          await pause(20 + Math.floor(Math.random() * 80))
          res = classifyFetch(await run(['fetch', '-q', '--no-tags', ...args]))
        }
        return res
      }),
    commitOf: async (rev, cwd) => sha(await run(['rev-parse', '--verify', '-q', `${rev}^{commit}`], cwd)),
    async headRef(cwd) {
      const r = await run(['symbolic-ref', '-q', 'HEAD'], cwd)
      return r.code === 0 ? r.stdout.trim() || null : null
    },
    async rebaseState(cwd) {
      const r = await run(['rev-parse', '--git-path', 'rebase-merge', '--git-path', 'rebase-apply', '--symbolic-full-name', 'HEAD'], cwd)
      const [merge = '', apply = '', head = ''] = r.stdout.split('\n').map((l) => l.trim())
      const rebasing = [merge, apply].some((p) => p !== '' && existsSync(path.resolve(cwd, p)))
      return {rebasing, head: r.code === 0 && head.startsWith('refs/') ? head : null}
    },
    names: async (args, cwd) => (await run(args, cwd)).stdout.split('\0').filter(Boolean),
  }
}
