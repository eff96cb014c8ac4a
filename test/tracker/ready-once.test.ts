// issue 30 item 7: `tracker ready --json` on 100k beads read the tracker about three times
// (the parse cache, then the tracker for every left-out value) and, with no cache or a
// stale one, spent half its time building a cache it then threw away. It now reads the
// tracker once and parses it once: it neither consults nor writes the parse cache.
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {trackerReadyOutput} from '../../src/tracker/query-text.js'
import {parseCachePath, readTrackerForQuery} from '../../src/tracker/parse-cache.js'
import {makeTempDir} from '../support/tmp.js'

function bigProject(): {root: string; file: string} {
  const root = makeTempDir('helix-ready-once-')
  mkdirSync(path.join(root, '.ddx'))
  const file = path.join(root, '.ddx', 'beads.jsonl')
  const lines: string[] = []
  // > 64 KB (the size from which a cache is built), long descriptions (left out of the cache)
  for (let i = 0; i < 400; i++) {
    const id = `hx-${String(i).padStart(8, '0')}`
    lines.push(JSON.stringify({id, title: `title ${i}`, status: i % 2 === 0 ? 'closed' : 'open', priority: 2, created_at: '2026-01-01T00:00:00Z', description: `about ${i} `.repeat(40)}))
  }
  writeFileSync(file, lines.join('\n') + '\n')
  return {root, file}
}

describe('tracker ready reads the tracker once', () => {
  it('writes no parse cache', async () => {
    const {root} = bigProject()
    const out = JSON.parse(await trackerReadyOutput({cwd: root, json: true, env: {}})) as Array<{id: string}>
    expect(out).toHaveLength(200)
    expect(existsSync(path.join(root, '.helix', 'cache'))).toBe(false)
  })

  it('answers from the tracker even where a cache for this very file says otherwise', async () => {
    const {root, file} = bigProject()
    // the status path builds the cache for the tracker's identity
    await readTrackerForQuery(root, file, {})
    const cacheFile = parseCachePath(root, file)
    const text = readFileSync(cacheFile, 'utf8')
    expect(text).toContain('"title 1"')
    writeFileSync(cacheFile, text.replace('"title 1"', '"from the cache"'))
    const again = await readTrackerForQuery(root, file, {})
    expect(again.byId.get('hx-00000001')!.title).toBe('from the cache')
    const ready = JSON.parse(await trackerReadyOutput({cwd: root, json: true, env: {}})) as Array<{id: string; title: string; description: string}>
    const b = ready.find((x) => x.id === 'hx-00000001')!
    expect(b.title).toBe('title 1')
    expect(b.description).toBe('about 1 '.repeat(40))
    expect(await trackerReadyOutput({cwd: root, env: {}})).toContain('title 1\n')
  })
})
