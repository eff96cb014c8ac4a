// A log link late in a long night (a session log of hundreds of MB) is served without
// stopping the server: before, the lines up to the asked range were read in one
// synchronous scan, and every page's updates and every other request waited for it
// (a 290 MB log, the last lines: 1.2 s for /state.json too, measured). Here a state
// request sent right after a log request on a 64 MB log is answered first.
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {trackerText} from '../support/project.js'
import {Hub} from '../../src/dashboard/hub.js'
import {ProjectReader} from '../../src/dashboard/project-view.js'
import {get, serveHub} from './serve.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length) await closers.pop()!()
})

describe('dashboard: a log range deep in a long session log', () => {
  it('is read without holding up the other requests, and is the right lines', async () => {
    const root = path.join(makeTempDir('helix-dash-longlog-'), 'repo')
    mkdirSync(path.join(root, '.ddx'), {recursive: true})
    mkdirSync(path.join(root, '.helix-logs'))
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText([{id: 'hx-a', title: 'first'}]))
    const line = JSON.stringify({level: 30, time: 0, msg: 'the agent says something of an ordinary length, again and again', stream: 'agent', dispatch: 1}) + '\n'
    const lines = Math.ceil((64 * 1024 * 1024) / line.length)
    writeFileSync(path.join(root, '.helix-logs', 'helix-long.log'), line.repeat(lines - 1) + JSON.stringify({level: 30, time: 0, msg: 'the very last line', stream: 'agent', dispatch: 1}) + '\n')
    const reader = new ProjectReader(0, root, {})
    const hub = new Hub({projects: [{root, read: (now) => reader.read(now)}], watch: () => ({close() {}})})
    const {port} = await serveHub(hub, [root], closers)

    const order: string[] = []
    // both requests are on the wire before the server reads either (one event loop)
    const log = get(port, `/log/0/helix-long.log?from=${lines - 1}&to=${lines}`).then((r) => (order.push('log'), r))
    const state = get(port, '/state.json').then((r) => (order.push('state'), r))
    const [l, s] = await Promise.all([log, state])
    expect(s.status).toBe(200)
    expect(l.status).toBe(200)
    expect(l.body.split('\n')[1]).toMatch(new RegExp(`^L${lines} +.*the very last line`))
    expect(order).toEqual(['state', 'log'])
  }, 60_000)
})
