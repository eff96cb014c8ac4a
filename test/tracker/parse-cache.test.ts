// Issue 18: the parse cache of one-shot read commands. What a caller sees must be
// exactly what a fresh parse gives, and the cache is never trusted without the
// tracker's identity (dev, inode, size, mtime) matching.
import {existsSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseCachePath, readTrackerForQuery} from '../../src/tracker/parse-cache.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {blockedBeads, readyBeads, statusCounts} from '../../src/tracker/queries.js'
import {parseTrackerLean} from '../../src/tracker/decode.js'
import {rawOf} from '../../src/tracker/lines.js'
import type {TrackerSnapshot} from '../../src/tracker/types.js'
import {copyReal, REAL_DDX, REAL_HELIX, tempProject} from './helpers.js'

/** everything a reader can observe of a snapshot */
function view(s: TrackerSnapshot) {
  return {
    beads: s.beads.map((b) => ({json: JSON.stringify(b), keys: Object.keys(b), spread: JSON.stringify({...b})})),
    byIdSame: s.beads.every((b) => s.byId.get(b.id) === b),
    size: s.byId.size,
    dupes: s.duplicateIds,
  }
}

const fresh = (file: string) => view(parseTracker(readFileSync(file), file))

describe('parse cache (one-shot read commands)', () => {
  for (const real of [REAL_HELIX, REAL_DDX]) {
    it(`${path.basename(real)}: the first read builds the cache, the next reads come from it, both equal a fresh parse`, async () => {
      const {root, paths} = copyReal(real)
      const cacheFile = parseCachePath(root, paths.file)
      expect(existsSync(cacheFile)).toBe(false)
      const first = (await readTrackerForQuery(root, paths.file, {}))
      expect(existsSync(cacheFile)).toBe(true)
      // the cache leaves the long values out: it is much smaller than the tracker
      expect(readFileSync(cacheFile).length).toBeLessThan(readFileSync(paths.file).length / 2)
      const second = (await readTrackerForQuery(root, paths.file, {}))
      expect(second).not.toBe(first)
      expect(view(second)).toEqual(fresh(paths.file))
      expect(view(first)).toEqual(fresh(paths.file))
      // git never shows it
      expect(readFileSync(path.join(path.dirname(cacheFile), '.gitignore'), 'utf8')).toBe('*\n')
    })
  }

  it('a left-out value is decoded on first use, then is a plain value; writing one works', async () => {
    const long = 'x'.repeat(400) + ' é <b> "q" \\ \u2028'
    const lines = Array.from({length: 300}, (_, i) => JSON.stringify({id: `hx-${String(i).padStart(4, '0')}`, description: long + i, status: 'open', title: `t${i}`}))
    const {root, paths} = tempProject(lines.join('\n') + '\n')
    await readTrackerForQuery(root, paths.file, {})
    const snap = await readTrackerForQuery(root, paths.file, {})
    const b = snap.byId.get('hx-0007')!
    expect(Object.getOwnPropertyDescriptor(b, 'description')!.get).toBeTypeOf('function')
    expect(b.description).toBe(long + '7')
    expect(Object.getOwnPropertyDescriptor(b, 'description')!.value).toBe(long + '7')
    const c = snap.byId.get('hx-0008')!
    c.description = 'changed'
    expect(c.description).toBe('changed')
    expect(Object.keys(c)).toEqual(['id', 'description', 'status', 'title'])
  })

  it('any change of the tracker (rewrite, same-size edit with a new mtime, rename over it) means a full parse', async () => {
    const lines = Array.from({length: 400}, (_, i) => JSON.stringify({id: `hx-${String(i).padStart(4, '0')}`, status: 'open', description: 'd'.repeat(300)}))
    const {root, paths} = tempProject(lines.join('\n') + '\n')
    await readTrackerForQuery(root, paths.file, {})
    // same size, different bytes, a later mtime: the cached parse must not be used
    const edited = readFileSync(paths.file, 'utf8').replace('"status":"open"', '"status":"shut"')
    writeFileSync(paths.file, edited)
    const t = new Date(Date.now() + 5000)
    utimesSync(paths.file, t, t)
    expect((await readTrackerForQuery(root, paths.file, {})).beads[0].status).toBe('shut')
    // renamed over (new inode)
    const tmp = paths.file + '.new'
    writeFileSync(tmp, edited.replace('"status":"shut"', '"status":"done"'))
    renameSync(tmp, paths.file)
    expect((await readTrackerForQuery(root, paths.file, {})).beads[0].status).toBe('done')
    expect(view((await readTrackerForQuery(root, paths.file, {})))).toEqual(fresh(paths.file))
  })

  it('a cache file for another tracker, a torn or junk cache, or HELIX_NO_PARSE_CACHE=1 is never used', async () => {
    const lines = Array.from({length: 400}, (_, i) => JSON.stringify({id: `hx-${String(i).padStart(4, '0')}`, status: 'open', description: 'd'.repeat(300)}))
    const {root, paths} = tempProject(lines.join('\n') + '\n')
    await readTrackerForQuery(root, paths.file, {})
    const cacheFile = parseCachePath(root, paths.file)
    const good = readFileSync(cacheFile, 'utf8')
    // another file's cache (the identity would match only by accident): refused by its recorded path
    writeFileSync(cacheFile, good.replace(JSON.stringify(paths.file), JSON.stringify(paths.file + 'x')).replace('"status":"open"', '"status":"WRONG"'))
    expect((await readTrackerForQuery(root, paths.file, {})).beads[0].status).toBe('open')
    writeFileSync(cacheFile, good.slice(0, good.length / 2))
    expect(view((await readTrackerForQuery(root, paths.file, {})))).toEqual(fresh(paths.file))
    // with the switch off the cache is not even read: a doctored one would otherwise win
    writeFileSync(cacheFile, readFileSync(cacheFile, 'utf8').replace('"status":"open"', '"status":"WRONG"'))
    expect((await readTrackerForQuery(root, paths.file, {HELIX_NO_PARSE_CACHE: '1'})).beads[0].status).toBe('open')
  })

  it('a malformed line still fails every read; small trackers get no cache', async () => {
    const {root, paths} = tempProject('{"id":"a"}\nnot json\n')
    await expect(readTrackerForQuery(root, paths.file, {})).rejects.toThrow(/beads.jsonl:2: malformed bead/)
    expect(existsSync(path.join(root, '.helix'))).toBe(false)
    writeFileSync(paths.file, '{"id":"a"}\n')
    expect((await readTrackerForQuery(root, paths.file, {})).beads.map((b) => b.id)).toEqual(['a'])
    expect(existsSync(path.join(root, '.helix'))).toBe(false)
    expect(readdirSync(root)).toEqual(['.ddx'])
  })

  it('duplicate ids, duplicate keys, integer-like keys and CRLF lines read the same from the cache', async () => {
    const pad = 'p'.repeat(300)
    const odd = [
      `{"id":"a","n":1,"n":2,"description":"${pad}"}`,
      `{"id":"b","10":1,"9":2,"description":"${pad}"}\r`,
      `{"id":"a","status":"closed","description":"${pad}2"}`,
      `{"id":"c","big":12345678901234567890,"x":1.0,"e":"\\u00e9","description":"${pad}"}`,
    ]
    const filler = Array.from({length: 300}, (_, i) => JSON.stringify({id: `z-${i}`, description: pad}))
    const {root, paths} = tempProject([...odd, ...filler].join('\n') + '\n')
    await readTrackerForQuery(root, paths.file, {})
    const snap = await readTrackerForQuery(root, paths.file, {})
    expect(view(snap)).toEqual(fresh(paths.file))
    expect(snap.duplicateIds).toEqual(['a'])
  })

  it('a tracker of short values gets a "not worth it" marker instead of a cache, and still reads right', async () => {
    const lines = Array.from({length: 3000}, (_, i) => JSON.stringify({id: `hx-${String(i).padStart(5, '0')}`, priority: i % 5, status: i % 3 ? 'open' : 'closed', title: `bead ${i}`}))
    const {root, paths} = tempProject(lines.join('\n') + '\n')
    await readTrackerForQuery(root, paths.file, {})
    const c = JSON.parse(readFileSync(parseCachePath(root, paths.file), 'utf8')) as {skip?: boolean; beads: unknown[]}
    expect(c.skip).toBe(true)
    expect(c.beads).toEqual([])
    expect(view(await readTrackerForQuery(root, paths.file, {}))).toEqual(fresh(paths.file))
  })

  it('a done bead is a stub: the queries read only its id, status and parent; any other use parses its line', async () => {
    const pad = 'p'.repeat(300)
    const lines = [
      JSON.stringify({id: 'ep', issue_type: 'epic', status: 'open', title: 'epic'}),
      JSON.stringify({id: 'kid', status: 'closed', parent: 'ep', labels: ['blocked'], title: 'kid', description: pad}),
      JSON.stringify({id: 'w', status: 'open', dependencies: [{depends_on_id: 'gone'}], title: 'waits'}),
      JSON.stringify({id: 'gone', status: 'cancelled', title: 'gone', description: pad}) + '\r',
      ...Array.from({length: 300}, (_, i) => JSON.stringify({id: `c-${i}`, status: 'closed', title: `c ${i}`, description: pad})),
    ]
    const {root, paths} = tempProject(lines.join('\n') + '\n')
    await readTrackerForQuery(root, paths.file, {})
    const snap = await readTrackerForQuery(root, paths.file, {})
    const counts = statusCounts(snap, readyBeads(snap, {owner: null}).length)
    const blocked = blockedBeads(snap).map((x) => [x.bead.id, x.waitingOn])
    expect(counts).toMatchObject({total: 304, closed: 301, cancelled: 1, open: 2, ready: 0, blocked: 1})
    expect(blocked).toEqual([['w', ['gone']]])
    // the tracker changes under the snapshot: a stub still answers id, status and parent…
    writeFileSync(paths.file, readFileSync(paths.file, 'utf8') + JSON.stringify({id: 'new'}) + '\n')
    const kid = snap.byId.get('kid')!
    expect([kid.id, kid.status, kid.parent]).toEqual(['kid', 'closed', 'ep'])
    // …and anything else needs its line, read only while the tracker is the one the cache was built for
    expect(() => kid.title).toThrow(/changed while it was being read/)
    // a fresh snapshot parses the new file; there a stub's line is read on first use, CRLF included
    const again = await readTrackerForQuery(root, paths.file, {})
    await readTrackerForQuery(root, paths.file, {})
    const third = await readTrackerForQuery(root, paths.file, {})
    expect(view(again)).toEqual(fresh(paths.file))
    const gone = third.byId.get('gone')!
    expect(gone.title).toBe('gone')
    expect('description' in gone).toBe(true)
    gone.title = 'renamed'
    expect({...gone}).toEqual({id: 'gone', status: 'cancelled', title: 'renamed', description: pad})
    expect(Object.getPrototypeOf(gone)).toBe(Object.prototype)
    expect(() => Object.freeze(gone)).toThrow(TypeError)
  })

  it('the lean parse (no cache built) gives the same beads, duplicates and errors as the full parse, without byte ranges', () => {
    const ok = Buffer.from('\ufeff{"id":"a","n":1,"n":2}\r\n\n  \n{"id":"b","10":1,"9":2}\n{"id":"a","status":"closed"}\n{"id":"c","e":"\\u00e9","big":12345678901234567890}')
    const lean = parseTrackerLean(ok, 'f')
    expect(view(lean)).toEqual(view(parseTracker(ok, 'f')))
    expect(lean.beads.every((b) => rawOf(b) === undefined)).toBe(true)
    for (const bad of ['{"id":"a"}\nnot json\n', '{"id":"a"}\n[1]\n', '{"x":1}\n', '{"id":"  "}\n', '{"id":"a"}\n\n{"id":"b"\r\n']) {
      const b = Buffer.from(bad)
      expect(() => parseTrackerLean(b, 'f')).toThrow()
      let want = ''
      try {
        parseTracker(b, 'f')
      } catch (error) {
        want = (error as Error).message
      }
      expect(() => parseTrackerLean(b, 'f')).toThrow(want)
    }
  })
})

