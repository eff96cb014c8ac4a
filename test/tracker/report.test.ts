import {copyFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {trackerReadyOutput, trackerStatusOutput, trackerBlockedOutput, showText, depTreeText} from '../../src/tracker/query-text.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {REPO, tempProject} from './helpers.js'

describe('report (the exact stdout of ready/status/blocked)', () => {
  it('renders the seed tracker', async () => {
    const {root, paths} = tempProject()
    copyFileSync(path.join(REPO, 'fixtures', 'trackers', 'small.jsonl'), paths.file)
    const env = {}
    expect(await trackerReadyOutput({cwd: root, env})).toBe(
      'hx-0000a002  P1  [open] Serialize the tracker\nhx-0000b001  P2  [open] Ranked first among P2\nhx-0000b004  P2  [in_progress] Stale claim from a dead helix\n',
    )
    expect(JSON.parse(await trackerReadyOutput({cwd: root, env, json: true})).map((b: {id: string}) => b.id)).toEqual(['hx-0000a002', 'hx-0000b001', 'hx-0000b004'])
    expect(await trackerStatusOutput({cwd: root, env, json: true})).toBe('{"total":10,"open":6,"in_progress":1,"closed":1,"blocked":2,"proposed":0,"cancelled":0,"ready":3}\n')
    expect(await trackerStatusOutput({cwd: root, env})).toBe(
      'Total:       10\nOpen:        6\nIn progress: 1\nClosed:      1\nBlocked:     2\nProposed:    0\nCancelled:   0\nReady:       3\n',
    )
    expect(await trackerBlockedOutput({cwd: root, env})).toBe(
      'hx-0000a003  P2  [open] Lock the tracker  (waiting on hx-0000a002)\nhx-0000b005  P2  [blocked] Parked: needs a human  (status blocked)\n',
    )
    // HELIX_ORPHAN_THRESHOLD large enough: the old claim is fresh, so not ready
    expect(await trackerStatusOutput({cwd: root, env: {HELIX_ORPHAN_THRESHOLD: String(10 * 365 * 86400)}, json: true})).toContain('"ready":2')
  })

  it('show and dep tree text', () => {
    const snap = parseTracker('{"dependencies":[{"issue_id":"a","depends_on_id":"b","type":"blocks"},{"issue_id":"a","depends_on_id":"z","type":"blocks"}],"id":"a","labels":["x","y"],"notes":"one\\ntwo","title":"A"}\n{"dependencies":[{"issue_id":"b","depends_on_id":"a","type":"blocks"}],"id":"b","status":"closed","title":"B"}\n', 't')
    expect(showText(snap.byId.get('a')!, snap)).toBe('[open] a (task) — A\n  depends on: b (closed), z (missing)\n  labels: x, y\n  notes: one\n    two\n')
    expect(depTreeText(snap, 'a')).toBe('a [open] A\n├── b [closed] B\n│   └── a (cycle)\n└── z (missing)\n')
  })

  it('show of an epic lists its children (issue 29)', () => {
    const snap = parseTracker('{"id":"ep","issue_type":"epic","title":"E"}\n{"id":"c1","parent":"ep","status":"closed","title":"one"}\n{"id":"c2","parent":"ep","title":"two\\u001b[2J"}\n{"id":"x","title":"other"}\n', 't')
    expect(showText(snap.byId.get('ep')!, snap)).toBe('[open] ep (epic) — E\n  children: 1 of 2 closed\n    c1 [closed] one\n    c2 [open] two?[2J\n')
    expect(showText(snap.byId.get('x')!, snap)).not.toContain('children')
  })

  it('a missing tracker is empty, not an error', async () => {
    const {root} = tempProject()
    expect(await trackerReadyOutput({cwd: root, env: {}})).toBe('')
    expect(await trackerStatusOutput({cwd: root, env: {}, json: true})).toBe('{"total":0,"open":0,"in_progress":0,"closed":0,"blocked":0,"proposed":0,"cancelled":0,"ready":0}\n')
  })
})

describe('text output neutralises control characters in untrusted fields', () => {
  const evil = 'ok\u001b]52;c;cHduZWQ=\u0007\nhx-fake  P0  [open] forged\r'
  const body =
    JSON.stringify({id: 'hx-1', title: evil, notes: 'line1\nline2\u001b[2J', priority: 0}) +
    '\n' +
    JSON.stringify({id: 'hx-2', title: 'two', dependencies: [{issue_id: 'hx-2', depends_on_id: 'hx-1', type: 'blocks'}]}) +
    '\n'

  it('ready/blocked/show/dep tree: one line per bead, no ESC/CR; --json unchanged', async () => {
    const {root} = tempProject(body)
    const ready = await trackerReadyOutput({cwd: root, env: {}})
    expect(ready.split('\n').filter(Boolean)).toHaveLength(1)
    expect(ready).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
    expect(ready).toContain('hx-1  P0  [open] ok?]52;c;cHduZWQ=?⏎hx-fake  P0  [open] forged?')
    const blocked = await trackerBlockedOutput({cwd: root, env: {}})
    expect(blocked.split('\n').filter(Boolean)).toHaveLength(1)
    const snap = parseTracker(body, 'x')
    const shown = showText(snap.byId.get('hx-1')!, snap)
    expect(shown).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
    expect(shown).toContain('  notes: line1\n    line2?[2J')
    expect(shown.split('\n')[0]).toBe('[open] hx-1 (task) — ok?]52;c;cHduZWQ=?⏎hx-fake  P0  [open] forged?')
    expect(depTreeText(snap, 'hx-2')).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
    expect(JSON.parse(await trackerReadyOutput({cwd: root, env: {}, json: true}))[0].title).toBe(evil)
  })
})
