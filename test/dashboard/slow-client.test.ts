// A page that stops reading (a laptop asleep, a stuck tab, a client that connects
// and never reads) must not make the dashboard hold every state it was sent: a night
// of an agent printing is a state every 200 ms. The server keeps at most one state
// waiting per page, and the page gets the newest one when it reads again.
import {connect, type Socket} from 'node:net'
import {afterEach, describe, expect, it} from 'vitest'
import {Hub} from '../../src/dashboard/hub.js'
import type {ProjectRead} from '../../src/dashboard/project-view.js'
import {serveHub} from './serve.js'
import {waitFor} from '../support/wait.js'

const closers: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (closers.length) await closers.pop()!()
})

/** A project whose one title is `big` bytes long and changes on every read. */
function bigProject(big: number) {
  let n = 0
  const read = async (): Promise<ProjectRead> => {
    n++
    const title = `v${n} ` + 'x'.repeat(big)
    return {
      view: {index: 0, name: 'p', root: '/p', error: null, run: null, slots: [], run_beads: [], queue: {ready: [{id: 'hx-a', title}], waiting: [], blocked: [], closed_today: [], counts: {closed: 0, total: 1, left: 1, waiting: 0, blocked: 0, ready: 1}, lengths: {ready: 1, waiting: 0, blocked: 0, closed_today: 0, held: 0}, held: [], eta_s: null}, events: [], night: {runs: 0, cycles: n, closed: 0, failed: 0, tokens: 0}},
      report: null,
    }
  }
  return {read, reads: () => n}
}

describe('dashboard server: a page that does not read', () => {
  it('holds at most one state for it, however many are published, and sends it the newest when it reads again', async () => {
    const STATE = 100_000
    const project = bigProject(STATE)
    const hub = new Hub({projects: [{root: '/p', read: project.read}], watch: () => ({close() {}})})
    const {port, server} = await serveHub(hub, ['/p'], closers)
    const serverSockets: Socket[] = []
    server.on('connection', (s) => serverSockets.push(s))

    // a client that asks for the events and then never reads
    const client = connect(port, '127.0.0.1')
    closers.push(() => void client.destroy())
    await new Promise<void>((resolve, reject) => {
      client.once('connect', resolve)
      client.once('error', reject)
    })
    client.pause()
    client.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
    await waitFor(() => hub.subscribers === 1, {what: 'the page subscribed'})

    // 300 states of 100 kB: 30 MB, more than the kernel's socket buffers take
    const published = 300
    for (let i = 0; i < published; i++) await hub.refresh()
    const sock = serverSockets[0]
    // what the server holds in memory for this page: at most one state beyond the stream's own buffer
    expect(sock.writableLength).toBeLessThan(3 * STATE)

    // reading again, the page gets the newest state
    const last = `"title":"v${project.reads()} `
    let seen = ''
    client.setEncoding('utf8')
    client.on('data', (c: string) => (seen = (seen + c).slice(-4 * STATE)))
    client.resume()
    await waitFor(() => seen.includes(last), {timeoutMs: 30_000, what: 'the newest state on the slow page'})
    expect(hub.subscribers).toBe(1)
  }, 60_000)
})
