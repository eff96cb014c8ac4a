/**
 * The fleet's run records (SPEC 22.2): each host keeps its `--remote` runs' history
 * lines (16.5) on the remote under `refs/helix/runs/<host>`, a commit whose tree
 * holds one file, `runs.jsonl`. A host pushes at the end of each `--remote` run:
 * the records already there plus the ones of its own `runs.jsonl` that carry its
 * host, as a child commit, by compare-and-set (`--force-with-lease=<ref>:<old>`).
 * A failed push changes nothing; the next run pushes the same lines again.
 * `helix report --remote` reads every host's ref with one `ls-remote` and one fetch.
 *
 * Lines are kept as their text (a field helix does not know survives the trip);
 * two lines are the same record when their host and `started_at` agree.
 */
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {firstLine, git, gitEnv} from '../git/run.js'
import {idProblem} from '../git/names.js'
import {openRepo} from '../git/repo.js'

export const RUNS_PREFIX = 'refs/helix/runs/'
export const RUNS_BLOB = 'runs.jsonl'

/** `refs/helix/runs/<host>`, or null when the host's name cannot name a ref */
export function runsRefName(host: string): string | null {
  return idProblem(host) === null ? `${RUNS_PREFIX}${host}` : null
}

interface Line {
  key: string
  started: number
  text: string
}

/** The run-record lines of `text` (optionally only those of `host`), keyed by host and start. */
export function recordLines(text: string, host?: string): Line[] {
  const out: Line[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (!line) continue
    let r: unknown
    try {
      r = JSON.parse(line)
    } catch {
      continue // half a line from a killed writer: not a record
    }
    if (!r || typeof r !== 'object' || Array.isArray(r)) continue
    const rec = r as Record<string, unknown>
    const started = typeof rec.started_at === 'string' ? Date.parse(rec.started_at) : Number.NaN
    if (Number.isNaN(started)) continue
    const h = typeof rec.host === 'string' ? rec.host : ''
    if (host !== undefined && h !== host) continue
    out.push({key: `${h}\u0000${String(rec.started_at)}`, started, text: line})
  }
  return out
}

/**
 * What the ref should hold: the lines already there, then ours that are missing, in
 * start order; null when nothing of ours is missing. A line already there wins (it
 * was pushed first and another reader may have seen it).
 */
export function mergeRecordText(remoteText: string, local: Line[]): string | null {
  const have = recordLines(remoteText)
  const keys = new Set(have.map((l) => l.key))
  const add: Line[] = []
  for (const l of local) {
    if (keys.has(l.key)) continue
    keys.add(l.key)
    add.push(l)
  }
  if (add.length === 0) return null
  return [...have, ...add]
    .sort((a, b) => a.started - b.started)
    .map((l) => l.text)
    .join('\n') + '\n'
}

export interface RunRecordsOptions {
  /** a directory inside the local repository */
  cwd: string
  remote: string
  env: NodeJS.ProcessEnv
  /** where the temporary index and file go (inside the git directory) */
  scratch: string
}

export type PushRecordsResult = {ok: true; pushed: number} | {ok: false; message: string}

function repoOf(o: RunRecordsOptions) {
  const env = gitEnv(o.env, {name: 'helix', email: 'helix@localhost'})
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => git(args, {cwd: o.cwd, env: {...env, ...extra}})
  return {env, run}
}

/** `<ref> → sha` on the remote for `pattern`; null when the remote did not answer. */
async function lsRemote(o: RunRecordsOptions, pattern: string): Promise<Map<string, string> | null> {
  const {run} = repoOf(o)
  const ls = await run(['ls-remote', o.remote, pattern])
  if (ls.code !== 0) return null
  const out = new Map<string, string>()
  for (const l of ls.stdout.split('\n')) {
    const [sha, ref] = l.split('\t')
    if (sha && ref && /^[0-9a-f]{40,64}$/.test(sha)) out.set(ref, sha)
  }
  return out
}

/** makes sure the commits are here (one fetch of the missing ones); false when the fetch failed */
async function haveCommits(o: RunRecordsOptions, refs: Map<string, string>): Promise<boolean> {
  const {run} = repoOf(o)
  const missing: string[] = []
  for (const [ref, sha] of refs) if ((await run(['cat-file', '-e', `${sha}^{commit}`])).code !== 0) missing.push(ref)
  if (missing.length === 0) return true
  // a refspec without a destination: objects only, no local ref and no FETCH_HEAD written
  return (await run(['fetch', '-q', '--no-tags', '--no-write-fetch-head', o.remote, ...missing])).code === 0
}

async function blobText(o: RunRecordsOptions, sha: string): Promise<string> {
  const r = await repoOf(o).run(['cat-file', 'blob', `${sha}:${RUNS_BLOB}`])
  return r.code === 0 ? r.stdout : ''
}

async function commitRecords(o: RunRecordsOptions, parent: string | null, text: string, host: string): Promise<string> {
  const {run} = repoOf(o)
  await mkdir(o.scratch, {recursive: true})
  const dir = await mkdtemp(path.join(o.scratch, 'runs-'))
  try {
    await writeFile(path.join(dir, RUNS_BLOB), text)
    const blob = await run(['hash-object', '-w', path.join(dir, RUNS_BLOB)])
    if (blob.code !== 0) throw new Error(`git hash-object: ${firstLine(blob)}`)
    const idx = {GIT_INDEX_FILE: path.join(dir, 'index')}
    const add = await run(['update-index', '--add', '--cacheinfo', `100644,${blob.stdout.trim()},${RUNS_BLOB}`], idx)
    if (add.code !== 0) throw new Error(`git update-index: ${firstLine(add)}`)
    const tree = await run(['write-tree'], idx)
    if (tree.code !== 0) throw new Error(`git write-tree: ${firstLine(tree)}`)
    const c = await run(['commit-tree', ...(parent ? ['-p', parent] : []), '-m', `helix(${host}): run records (${new Date().toISOString()})`, tree.stdout.trim()])
    if (c.code !== 0) throw new Error(`git commit-tree: ${firstLine(c)}`)
    return c.stdout.trim()
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

/**
 * Pushes `host`'s records from `localText` (the host's runs.jsonl) to
 * `refs/helix/runs/<host>`. Never throws: a failure is `{ok: false, message}` (git's
 * words, unsanitized: the caller sanitizes).
 */
export async function pushRunRecords(o: RunRecordsOptions & {host: string; localText: string}): Promise<PushRecordsResult> {
  const ref = runsRefName(o.host)
  if (!ref) return {ok: false, message: `the host name '${o.host}' cannot name a git ref (${idProblem(o.host)}); set HELIX_HOST`}
  const local = recordLines(o.localText, o.host)
  if (local.length === 0) return {ok: true, pushed: 0}
  try {
    // a lost compare-and-set (two runs of one host ending together) is read again and retried
    for (let round = 0; ; round++) {
      const refs = await lsRemote(o, ref)
      if (!refs) return {ok: false, message: `${o.remote} did not answer`}
      const old = refs.get(ref) ?? null
      if (old && !(await haveCommits(o, new Map([[ref, old]])))) return {ok: false, message: `cannot fetch ${ref} from ${o.remote}`}
      const before = old ? await blobText(o, old) : ''
      const next = mergeRecordText(before, local)
      if (next === null) return {ok: true, pushed: 0}
      const sha = await commitRecords(o, old, next, o.host)
      const p = await openRepo(o.cwd, repoOf(o).env).push([`--force-with-lease=${ref}:${old ?? ''}`, o.remote, `${sha}:${ref}`], {hooks: false})
      if (p.ok) return {ok: true, pushed: recordLines(next).length - recordLines(before).length}
      if (p.kind !== 'race' || round >= 5) return {ok: false, message: p.message}
      await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 200)))
    }
  } catch (error) {
    return {ok: false, message: error instanceof Error ? error.message : String(error)}
  }
}

export interface HostRecords {
  host: string
  ref: string
  sha: string
  /** the ref's runs.jsonl as it is on the remote */
  text: string
}

/** Every host's records on the remote (one ls-remote, one fetch); null when the remote did not answer. */
export async function readRunRecords(o: RunRecordsOptions): Promise<HostRecords[] | null> {
  const refs = await lsRemote(o, `${RUNS_PREFIX}*`)
  if (!refs) return null
  const mine = new Map([...refs].filter(([ref]) => ref.startsWith(RUNS_PREFIX) && runsRefName(ref.slice(RUNS_PREFIX.length)) === ref))
  if (!(await haveCommits(o, mine))) return null
  const out: HostRecords[] = []
  for (const [ref, sha] of [...mine].sort(([a], [b]) => a.localeCompare(b))) out.push({host: ref.slice(RUNS_PREFIX.length), ref, sha, text: await blobText(o, sha)})
  return out
}
