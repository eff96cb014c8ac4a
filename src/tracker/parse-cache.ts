/**
 * The parse cache of one-shot read commands: `helix status`,
 * `tracker ready`, `tracker status` run in a fresh process each time, so the
 * per-process cache (read-cache.ts) never helps them. This one is a file under
 * `.helix/cache/`, keyed on the tracker's identity (dev, inode, size, mtime in
 * ns) and never trusted without that check: the tracker is fstat'ed on every
 * read, exactly as a full read would, and any difference means a full parse.
 *
 * What it holds: the parsed beads with every value longer than LAZY_MIN bytes
 * left out as a byte range of the tracker. A bead built from it is a plain
 * object with its keys in file order; a left-out value is an enumerable
 * accessor that decodes its bytes on first use (reading the tracker then, and
 * checking its identity again) and becomes a plain value. Spreading,
 * JSON.stringify and Object.keys see the same bead a full parse gives.
 *
 * A done bead (status "closed" or "cancelled": most of a mature tracker) is kept
 * smaller still: only its id, status and parent, plus its line's byte range. It
 * is handed out as a Proxy that answers those three keys from the cache and, on
 * any other use (another key, `in`, Object.keys, spreading, JSON.stringify, a
 * write), parses its line from the tracker (identity checked again) and from
 * then on is exactly that parsed bead. The queries read nothing else of a done
 * bead (status, the parent index, a dependency's status), so `status` and
 * `tracker ready` never touch the tracker's bytes.
 *
 * It never writes the tracker, so SPEC 13.2's byte rules are untouched: these
 * snapshots are for reading only and never reach a writer (no RawLine).
 * Malformed lines are found by the full parse that builds the cache; a cache
 * exists only for a file that parsed. A line whose keys do not come out of
 * JSON.parse in file order (duplicates, integer-like keys) is kept whole.
 */
import {mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT} from '../util/errors.js'
import type {Bead, TrackerSnapshot} from './types.js'
import {readTrackerBytes, sameIdentity, type FileIdentity} from './read-file.js'
import type {RawLine} from './lines.js'

const VERSION = 2
/** values longer than this (in bytes of JSON) are decoded only when used */
const LAZY_MIN = 160
/** smaller trackers parse faster than the cache file would load */
const MIN_CACHED_BYTES = 64 * 1024
/** a cache larger than this share of the tracker is not worth reading instead of the tracker */
const MAX_CACHE_SHARE = 0.4

/** one bead: the bead with 0 in place of each lazy value (keys in file order), and the lazy spans [key, start, end, …] */
type FullEntry = [Bead, Array<string | number>]
/** one done bead: id, status, parent (0: none), and its line `[start, end)` in the tracker */
type DoneEntry = [string, string, string | 0, number, number]
type Entry = FullEntry | DoneEntry
const DONE_STATUS = new Set(['closed', 'cancelled'])

interface CacheFile {
  v: number
  file: string
  id: {dev: string; ino: string; size: string; mtimeNs: string}
  duplicateIds: string[]
  beads: Entry[]
  /** the cache would not be much smaller than the tracker: this identity is parsed in full, with no cache built */
  skip?: boolean
}

/** `<root>/.helix/cache/tracker-<hash of the tracker path>.json` */
export function parseCachePath(root: string, file: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < file.length; i++) h = Math.imul(h ^ file.charCodeAt(i), 0x01000193) >>> 0
  return path.join(root, '.helix', 'cache', `tracker-${h.toString(16).padStart(8, '0')}.json`)
}

function idJson(id: FileIdentity): CacheFile['id'] {
  return {dev: String(id.dev), ino: String(id.ino), size: String(id.size), mtimeNs: String(id.mtimeNs)}
}

function idOf(j: CacheFile['id']): FileIdentity {
  return {dev: BigInt(j.dev), ino: BigInt(j.ino), size: BigInt(j.size), mtimeNs: BigInt(j.mtimeNs)}
}

function loadCache(cacheFile: string, file: string): CacheFile | null {
  try {
    const c = JSON.parse(readFileSync(cacheFile, 'utf8')) as CacheFile
    return c.v === VERSION && c.file === file && (c.skip === true || Array.isArray(c.beads)) ? c : null
  } catch {
    // missing, unreadable or torn: a full parse rebuilds it
    return null
  }
}

/**
 * The byte offsets of each top-level value in a record line (offsets into the
 * line) that parsed to an object with `keys`, or null when its keys are not
 * exactly those, in that order (duplicates, integer-like keys, non-ASCII keys).
 * The walk reads the bytes as latin1: one character per byte, and every byte
 * of a multi-byte UTF-8 character is ≥ 0x80, so it never looks like a quote,
 * a backslash or a bracket.
 */
function valueSpans(line: Buffer, keys: string[]): Array<{key: string; start: number; end: number}> | null {
  const out: Array<{key: string; start: number; end: number}> = []
  // a tiny walk over the line: the parse above proved it is one valid JSON object
  const s = line.toString('latin1')
  let i = s.indexOf('{') + 1
  const ws = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\r' || s[i] === '\n')) i++
  }
  const str = () => {
    i++
    while (s[i] !== '"') i += s[i] === '\\' ? 2 : 1
    i++
  }
  for (;;) {
    ws()
    if (s[i] !== '"') break
    const k0 = i
    str()
    const key = JSON.parse(s.slice(k0, i)) as string
    ws()
    i++ // ':'
    ws()
    const v0 = i
    if (s[i] === '"') str()
    else if (s[i] === '{' || s[i] === '[') {
      let depth = 0
      do {
        if (s[i] === '"') {
          str()
          continue
        }
        if (s[i] === '{' || s[i] === '[') depth++
        else if (s[i] === '}' || s[i] === ']') depth--
        i++
      } while (depth > 0)
    } else while (i < s.length && !/[\s,}]/.test(s[i])) i++
    out.push({key, start: v0, end: i})
    ws()
    if (s[i] === ',') i++
  }
  // keys as JSON.parse orders them, no duplicates: otherwise the bead is kept whole
  if (out.length !== keys.length || out.some((e, n) => e.key !== keys[n])) return null
  return out
}

function entryOf(b: Bead, raw: RawLine | undefined): Entry {
  // a done bead with a plain status and parent (absent or a string): a stub answers what the queries read
  if (raw !== undefined && typeof b.status === 'string' && DONE_STATUS.has(b.status) && (b.parent === undefined || typeof b.parent === 'string')) {
    return [b.id, b.status, b.parent === undefined ? 0 : b.parent, raw.start, raw.end]
  }
  const lazy: Array<string | number> = []
  if (raw === undefined || raw.end - raw.start <= LAZY_MIN) return [b, lazy]
  const keys = Object.keys(b)
  const spans = valueSpans(raw.bytes, keys)
  if (spans === null) return [b, lazy]
  let o: Bead | null = null
  for (const sp of spans) {
    if (sp.end - sp.start <= LAZY_MIN) continue
    o ??= {...b}
    o[sp.key] = 0
    lazy.push(sp.key, raw.start + sp.start, raw.start + sp.end)
  }
  return [o ?? b, lazy]
}

function writeCache(cacheFile: string, text: string): void {
  try {
    mkdirSync(path.dirname(cacheFile), {recursive: true})
    // git never shows the cache, whether or not the project ignores .helix/
    writeFileSync(path.join(path.dirname(cacheFile), '.gitignore'), '*\n')
    const tmp = `${cacheFile}.tmp-${process.pid}`
    writeFileSync(tmp, text)
    renameSync(tmp, cacheFile)
  } catch {
    // a cache is an optimisation: a read-only project, a full disk… just parse next time
  }
}

/** The tracker's bytes, read at most once per snapshot, and only while it still has the identity the cache was built for. */
class LazySource {
  private buf: Buffer | null = null
  constructor(
    private readonly file: string,
    private readonly id: FileIdentity,
  ) {}
  bytes(): Buffer {
    if (this.buf) return this.buf
    const r = readTrackerBytes(this.file)
    if (r === null || r.buf === null || !sameIdentity(r.id, this.id)) throw new HelixError(`${this.file} changed while it was being read; run the command again`, EXIT.BUSY)
    this.buf = r.buf
    return this.buf
  }
  /** the bead on the line `[start, end)`, parsed as the full parse does (parseLine: the line's text without a trailing CR) */
  line(start: number, end: number): Bead {
    const buf = this.bytes()
    return JSON.parse(buf.toString('utf8', start, end > start && buf[end - 1] === 0x0d ? end - 1 : end)) as Bead
  }
}

/** what a done bead's proxy holds: the stub's values, where its line is, and the parsed bead once needed */
class DoneStub {
  full: Bead | null = null
  constructor(
    readonly id: string,
    readonly status: string,
    readonly parent: string | undefined,
    readonly start: number,
    readonly end: number,
    readonly src: LazySource,
  ) {}
}

function fullOf(t: DoneStub): Bead {
  return (t.full ??= t.src.line(t.start, t.end))
}

/**
 * One handler for every done bead (the hot `get` stays monomorphic): id, status and
 * parent come from the stub; anything else first parses the bead's line, and from
 * then on every operation goes to that parsed bead. The proxy's target (the stub)
 * only has configurable properties and stays extensible, so forwarding keeps the
 * proxy invariants.
 */
const DONE_HANDLER: ProxyHandler<DoneStub> = {
  get(t, key) {
    if (t.full === null && (key === 'status' || key === 'id' || key === 'parent')) return t[key]
    return Reflect.get(fullOf(t), key)
  },
  set: (t, key, value) => Reflect.set(fullOf(t), key, value),
  has: (t, key) => Reflect.has(fullOf(t), key),
  ownKeys: (t) => Reflect.ownKeys(fullOf(t)),
  getOwnPropertyDescriptor: (t, key) => Reflect.getOwnPropertyDescriptor(fullOf(t), key),
  defineProperty: (t, key, d) => Reflect.defineProperty(fullOf(t), key, d),
  deleteProperty: (t, key) => Reflect.deleteProperty(fullOf(t), key),
  // a parsed bead is a plain object
  getPrototypeOf: () => Object.prototype,
  setPrototypeOf: (t, proto) => Reflect.setPrototypeOf(fullOf(t), proto),
  // freezing or sealing would have to make the stub agree with the bead: refused
  preventExtensions: () => false,
}

function doneBead(e: DoneEntry, src: LazySource): Bead {
  return new Proxy(new DoneStub(e[0], e[1], e[2] === 0 ? undefined : e[2], e[3], e[4], src), DONE_HANDLER) as unknown as Bead
}

const LAZY = Symbol('helix.tracker.lazyValues')
type LazyInfo = {src: LazySource; spans: Map<string, [number, number]>}
const accessors = new Map<string, PropertyDescriptor>()

function settle(o: Bead, key: string, value: unknown): void {
  Object.defineProperty(o, key, {value, writable: true, enumerable: true, configurable: true})
}

/** one shared getter/setter pair per key name, so beads with the same keys share their shape */
function accessorFor(key: string): PropertyDescriptor {
  let d = accessors.get(key)
  if (d === undefined) {
    d = {
      enumerable: true,
      configurable: true,
      get(this: Bead) {
        const info = (this as unknown as Record<symbol, LazyInfo>)[LAZY]
        const [s, e] = info.spans.get(key)!
        const value: unknown = JSON.parse(info.src.bytes().toString('utf8', s, e))
        settle(this, key, value)
        return value
      },
      set(this: Bead, value: unknown) {
        settle(this, key, value)
      },
    }
    accessors.set(key, d)
  }
  return d
}

function beadOf(e: Entry, src: LazySource): Bead {
  if (typeof e[0] === 'string') return doneBead(e as DoneEntry, src)
  const [o, lazy] = e as FullEntry
  if (lazy.length === 0) return o
  const spans = new Map<string, [number, number]>()
  for (let i = 0; i < lazy.length; i += 3) {
    const key = lazy[i] as string
    spans.set(key, [lazy[i + 1] as number, lazy[i + 2] as number])
    // redefining a key keeps its place: the bead's keys stay in file order
    Object.defineProperty(o, key, accessorFor(key))
  }
  Object.defineProperty(o, LAZY, {value: {src, spans}, enumerable: false})
  return o
}

/**
 * A read-only snapshot of `file` for one-shot read commands: from the cache
 * under `<root>/.helix/cache/` when the tracker still has the identity it was
 * built for, else from a full parse (which then refreshes the cache).
 * HELIX_NO_PARSE_CACHE=1 turns it off.
 */
export async function readTrackerForQuery(root: string, file: string, env: NodeJS.ProcessEnv = process.env): Promise<TrackerSnapshot> {
  if (env.HELIX_NO_PARSE_CACHE === '1') return readTrackerLean(file)
  const cacheFile = parseCachePath(root, file)
  const cached = loadCache(cacheFile, file)
  const known = cached ? idOf(cached.id) : undefined
  const r = readTrackerBytes(file, known)
  if (r === null) return emptySnapshot()
  if (r.buf === null && cached && known && !cached.skip) {
    const src = new LazySource(file, known)
    const snap = emptySnapshot()
    snap.beads = cached.beads.map((e) => beadOf(e, src))
    for (const b of snap.beads) snap.byId.set(b.id, b)
    snap.duplicateIds = cached.duplicateIds
    return snap
  }
  // the parser is loaded only when the cache cannot answer
  const {parseTracker, parseTrackerLean} = await import('./decode.js')
  // this very file was judged not worth a cache: nothing is built from the parse, so it needs no byte ranges
  if (r.buf === null && cached?.skip === true) return parseTrackerLean(await readAll(file), file)
  const {rawOf} = await import('./lines.js')
  const snap = parseTracker(r.buf ?? (await readAll(file)), file)
  if (r.buf !== null && r.buf.length >= MIN_CACHED_BYTES) {
    const c: CacheFile = {v: VERSION, file, id: idJson(r.id), duplicateIds: snap.duplicateIds, beads: snap.beads.map((b) => entryOf(b, rawOf(b)))}
    const text = JSON.stringify(c)
    // mostly short values (many small beads): the cache would cost about what the parse costs
    writeCache(cacheFile, text.length > r.buf.length * MAX_CACHE_SHARE ? JSON.stringify({...c, beads: [], skip: true}) : text)
  }
  return snap
}

async function readAll(file: string): Promise<Buffer> {
  return readTrackerBytes(file)?.buf ?? Buffer.alloc(0)
}

/**
 * One read and one parse, nothing else: the whole snapshot without the parse cache
 * (HELIX_NO_PARSE_CACHE=1). `tracker ready`, which prints whole beads, reads neither this
 * nor the cache: it keeps only what the ready rules read (ready-read.ts).
 */
export async function readTrackerLean(file: string): Promise<TrackerSnapshot> {
  const r = readTrackerBytes(file)
  const {parseTrackerLean} = await import('./decode.js')
  return r === null ? emptySnapshot() : parseTrackerLean(r.buf ?? Buffer.alloc(0), file)
}

function emptySnapshot(): TrackerSnapshot {
  return {beads: [], byId: new Map(), duplicateIds: []}
}
