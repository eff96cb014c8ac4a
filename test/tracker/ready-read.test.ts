// `tracker ready` keeps whole only the beads that may be ready (ready-read.ts); everything
// it prints and refuses must match the strict parse and the snapshot's ready rules.
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseTracker} from '../../src/tracker/codec.js'
import {readyBeads, readyFrom} from '../../src/tracker/queries.js'
import {readReadyInput} from '../../src/tracker/ready-read.js'
import {trackerReadyOutput} from '../../src/tracker/query-text.js'
import {helixInProcess} from '../support/in-process.js'
import {makeTempDir} from '../support/tmp.js'

const dep = (from: string, on: string) => [{issue_id: from, depends_on_id: on, type: 'blocks'}]

// odd but valid lines: a byte order mark, CRLF, blank lines, unicode escapes and raw
// non-ASCII, duplicate ids whose last line changes the status or the parent, a
// duplicate key inside one record, numbers JSON.parse rounds
const lines = [
  '\ufeff{"id":"a","title":"caf\\u00e9 \\ud83d\\ude00","priority":1,"created_at":"2026-01-02T00:00:00Z"}\r',
  '',
  '   ',
  JSON.stringify({id: 'flip-open', status: 'closed', title: 'first copy closed'}),
  JSON.stringify({id: 'flip-closed', status: 'open', title: 'first copy open'}),
  JSON.stringify({id: 'needs-flip-closed', dependencies: dep('needs-flip-closed', 'flip-closed'), title: 'waits on a bead whose last line is closed'}),
  JSON.stringify({id: 'needs-flip-open', dependencies: dep('needs-flip-open', 'flip-open'), title: 'waits on a bead whose last line is open'}),
  JSON.stringify({id: 'epic-done-kids', issue_type: 'epic', title: 'epic with a closed child'}),
  JSON.stringify({id: 'kid', status: 'closed', parent: 'epic-done-kids'}),
  JSON.stringify({id: 'epic-lost-kid', issue_type: 'epic', title: 'its child moved away'}),
  JSON.stringify({id: 'moved', status: 'cancelled', parent: 'epic-lost-kid'}),
  JSON.stringify({id: 'self', issue_type: 'epic', parent: 'self'}),
  '{"id":"dupkey","status":"closed","status":"open","title":"ünïcödé raw","n":1.0,"big":12345678901234567890}\r',
  JSON.stringify({id: 'num-status', status: 7, priority: 0}),
  JSON.stringify({id: 'empty-status', status: '', priority: 3}),
  JSON.stringify({id: 'on-missing', dependencies: dep('on-missing', 'ghost')}),
  JSON.stringify({id: 'on-blocked', dependencies: dep('on-blocked', 'blk')}),
  JSON.stringify({id: 'blk', status: 'blocked'}),
  JSON.stringify({id: 'ip', status: 'in_progress', owner: 'someone', 'claimed-at': '2020-01-01T00:00:00Z', 'claimed-machine': 'elsewhere'}),
  JSON.stringify({id: 'flip-open', status: 'open', title: 'last copy open', 'queue-rank': 1}),
  JSON.stringify({id: 'flip-closed', status: 'closed', title: 'last copy closed'}),
  JSON.stringify({id: 'moved', status: 'cancelled'}),
]
const text = lines.join('\n')
const expectedIds = ['num-status', 'a', 'flip-open', 'dupkey', 'epic-lost-kid', 'ip', 'needs-flip-closed', 'empty-status']

function project(content: string | Buffer): string {
  const root = makeTempDir('helix-ready-read-')
  mkdirSync(path.join(root, '.ddx'))
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), content)
  return root
}

/** what `tracker ready` reads of a tracker with this content (the real, chunked read) */
function inputOf(content: string | Buffer) {
  return readReadyInput(path.join(project(content), '.ddx', 'beads.jsonl'))
}

describe('tracker ready keeps only what the ready rules read', () => {
  it('finds the same ready beads as the whole snapshot, in the same order', () => {
    const buf = Buffer.from(text)
    const stale = new Set(['ip'])
    const fromSnapshot = readyBeads(parseTracker(buf, 'f'), {staleClaims: stale, owner: null})
    const fromInput = readyFrom(inputOf(buf), {staleClaims: stale, owner: null})
    expect(fromInput.map((b) => b.id)).toEqual(expectedIds)
    expect(fromSnapshot.map((b) => b.id)).toEqual(expectedIds)
    expect(JSON.stringify(fromInput)).toBe(JSON.stringify(fromSnapshot))
  })

  it('keeps whole only the open and in_progress beads (last line wins)', () => {
    const input = inputOf(text)
    expect(input.beads.map((b) => b.id).sort()).toEqual(
      ['a', 'dupkey', 'empty-status', 'epic-done-kids', 'epic-lost-kid', 'flip-open', 'ip', 'needs-flip-closed', 'needs-flip-open', 'num-status', 'on-blocked', 'on-missing', 'self'].sort(),
    )
    expect(input.statusById('flip-closed')).toBe('closed')
    expect(input.statusById('flip-open')).toBe('open')
    expect(input.statusById('num-status')).toBe('open')
    expect(input.statusById('ghost')).toBeUndefined()
    expect(input.hasChildren('epic-done-kids')).toBe(true)
    expect(input.hasChildren('epic-lost-kid')).toBe(false)
    expect(input.hasChildren('self')).toBe(true)
  })

  it('prints byte for byte what the snapshot gives, --json and text', async () => {
    const root = project(text)
    const env = {HELIX_ORPHAN_THRESHOLD: '60'}
    const snap = parseTracker(Buffer.from(text), 'f')
    // the claim of `ip` is years old and of another machine: stale, so listed
    const want = readyBeads(snap, {staleClaims: new Set(['ip']), owner: null})
    const json = await trackerReadyOutput({cwd: root, json: true, env})
    expect(json).toBe(JSON.stringify(want) + '\n')
    expect(json).toContain('"title":"café 😀"')
    expect(json).toContain('"n":1,"big":12345678901234567000')
    const out = await trackerReadyOutput({cwd: root, env})
    expect(out.split('\n').filter(Boolean).map((l) => l.split('  ')[0])).toEqual(expectedIds)
    expect(out).toContain('ip  P2  [in_progress]   (claimed by someone (stale))')
  })

  it('the command prints that answer, and refuses a malformed tracker in one line with exit 1', async () => {
    const root = project(text)
    const env = {HELIX_ORPHAN_THRESHOLD: '60'}
    const want = readyBeads(parseTracker(Buffer.from(text), 'f'), {staleClaims: new Set(['ip']), owner: null})
    const r = await helixInProcess(root, ['tracker', 'ready', '--json'], env)
    expect(r).toMatchObject({code: 0, stderr: ''})
    expect(r.stdout).toBe(JSON.stringify(want) + '\n')
    const bad = project(text + '\n{"id":"x",\n')
    const refused = await helixInProcess(bad, ['tracker', 'ready', '--json'], env)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(new RegExp(`^helix: .*beads\\.jsonl:${lines.length + 1}: malformed bead \\(invalid JSON: [^\\n]*\\) — run 'helix tracker doctor' to inspect or repair\\n$`))
  })

  it('refuses a malformed line with the strict parse’s error', () => {
    const bad = [
      '{"id":"a"}\nnot json\n',
      '{"id":"a"}\n[1]\n',
      '{"x":1}\n',
      '{"id":"  "}\n',
      '{"id":"a"}\n\n{"id":"b"\r\n',
      '\ufeff{"id":"a","status":"closed"}\r\n{"id":"b","status":"open",}\n',
    ]
    for (const s of bad) {
      const file = path.join(project(s), '.ddx', 'beads.jsonl')
      let want = ''
      try {
        parseTracker(Buffer.from(s), file)
      } catch (error) {
        want = (error as Error).message
      }
      expect(want.startsWith(`${file}:`) && / malformed bead/.test(want)).toBe(true)
      expect(() => readReadyInput(file)).toThrow(want)
    }
  })

  it('an in_progress bead whose claim is certainly live is kept as its status only; its dependent still waits', async () => {
    const t = [
      JSON.stringify({id: 'live', status: 'in_progress', owner: 'someone', 'claimed-at': new Date().toISOString(), 'claimed-machine': 'elsewhere'}),
      JSON.stringify({id: 'old', status: 'in_progress', owner: 'someone', 'claimed-at': '2020-01-01T00:00:00Z', 'claimed-machine': 'elsewhere'}),
      JSON.stringify({id: 'after-live', dependencies: dep('after-live', 'live')}),
      JSON.stringify({id: 'free'}),
    ].join('\n')
    const root = project(t)
    const input = readReadyInput(path.join(root, '.ddx', 'beads.jsonl'), {mayBeStale: (b) => b.id !== 'live'})
    expect(input.beads.map((b) => b.id)).toEqual(['old', 'after-live', 'free'])
    expect(input.statusById('live')).toBe('in_progress')
    // the command decides "certainly live" itself: the same answer as the whole snapshot with the stale claims
    const env = {HELIX_ORPHAN_THRESHOLD: '60'}
    const want = readyBeads(parseTracker(Buffer.from(t), 'f'), {staleClaims: new Set(['old']), owner: null})
    expect(want.map((b) => b.id).sort()).toEqual(['free', 'old'])
    expect(await trackerReadyOutput({cwd: root, json: true, env})).toBe(JSON.stringify(want) + '\n')
  })

  it('an empty or missing tracker has nothing ready', async () => {
    expect(await trackerReadyOutput({cwd: project(''), json: true, env: {}})).toBe('[]\n')
    const root = project('')
    expect(await trackerReadyOutput({cwd: root, env: {}})).toBe('')
  })
})
