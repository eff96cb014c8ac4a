import {readFileSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix, tempProject} from './helpers.js'

// helix tracker through the built CLI, part 3 of 3: untrusted text (doctor, import and export
// run in-process: cli-text.test.ts).

describe('helix tracker: untrusted text', () => {
  it('quotes, $(…), %s, newlines and non-ASCII are stored and printed literally; nothing runs', () => {
    const {root} = tempProject()
    const title = `it's "quoted" $(touch pwned) \`touch pwned2\` %s %d %j; rm -rf / é☃ <b>&`
    const notes = 'line1\nline2 $(touch pwned3)\n%s'
    const r = helix(root, ['tracker', 'create', title, '--notes', notes, '--json'])
    expect(r.code).toBe(0)
    const rec = JSON.parse(r.stdout)
    expect(rec.title).toBe(title)
    expect(rec.notes).toBe(notes)
    const shown = helix(root, ['tracker', 'show', rec.id])
    expect(shown.stdout.split('\n')[0]).toBe(`[open] ${rec.id} (task) — ${title}`)
    expect(shown.stdout).toContain('  notes: line1\n    line2 $(touch pwned3)\n    %s\n')
    expect(helix(root, ['tracker', 'ready']).stdout).toBe(`${rec.id}  P2  [open] ${title}\n`)
    const file = readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8')
    expect(file).toContain('é☃ \\u003cb\\u003e\\u0026')
    expect(file.split('\n').filter(Boolean)).toHaveLength(1)
    expect(readdirSync(root).filter((f) => f.startsWith('pwned'))).toEqual([])
  })
})
