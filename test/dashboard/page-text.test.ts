// Untrusted text reaches the page as the terminal gets it (SPEC 13.5): a title cannot
// reverse the text around it (bidi controls), hide an escape sequence or a carriage
// return, or break a row in two; and a 1 MB title is cut, not sent whole to every
// page on every change. Markup stays as characters (the page inserts text only).
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {trackerText} from '../support/project.js'
import {Hub, PAGE_TEXT_MAX} from '../../src/dashboard/hub.js'
import {ProjectReader} from '../../src/dashboard/project-view.js'
import type {DashboardState} from '../../src/dashboard/types.js'

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/

function strings(x: unknown, out: string[] = []): string[] {
  if (typeof x === 'string') out.push(x)
  else if (Array.isArray(x)) for (const v of x) strings(v, out)
  else if (x && typeof x === 'object') for (const v of Object.values(x)) strings(v, out)
  return out
}

describe('dashboard: untrusted text in the page state', () => {
  it('bidi controls, escapes, CR and line breaks are made visible; a 1 MB title is cut; markup stays text', async () => {
    const root = path.join(makeTempDir('helix-dash-text-'), 'repo')
    mkdirSync(path.join(root, '.ddx'), {recursive: true})
    const huge = 'A'.repeat(1024 * 1024)
    writeFileSync(
      path.join(root, '.ddx', 'beads.jsonl'),
      trackerText([
        {id: 'hx-a', title: 'pay invoice \u202Efdp.exe\u202C <img src=x onerror=alert(1)>'},
        {id: 'hx-b', title: 'red \u001b[31mALERT\u001b[0m\rfake\nsecond line\u2028third'},
        {id: 'hx-c', title: huge},
        {id: 'hx-d', title: 'blocked one', labels: ['blocked'], notes: 'BLOCKED: blocked after 2 attempts; last: rc=1: \u001b]0;pwned\u0007 \u2066tests\u2069 fail'},
      ]),
    )
    const reader = new ProjectReader(0, root, {})
    const hub = new Hub({projects: [{root, read: (now) => reader.read(now)}], watch: () => ({close() {}})})
    await hub.start()
    try {
      const state = JSON.parse(hub.json) as DashboardState
      for (const s of strings(state)) {
        expect(s).not.toMatch(UNSAFE)
        expect(s.length).toBeLessThanOrEqual(PAGE_TEXT_MAX)
      }
      const q = state.projects[0].queue!
      const title = (id: string) => q.ready.find((b) => b.id === id)?.title
      expect(title('hx-a')).toBe('pay invoice ?fdp.exe? <img src=x onerror=alert(1)>')
      expect(title('hx-b')).toBe('red ?[31mALERT?[0m?fake⏎second line?third')
      expect(title('hx-c')).toBe('A'.repeat(PAGE_TEXT_MAX - 1) + '…')
      expect(q.blocked[0].reason).toContain('rc=1: ?]0;pwned? ?tests? fail')
      expect(hub.json.length).toBeLessThan(20_000)
    } finally {
      hub.close()
    }
  })
})
