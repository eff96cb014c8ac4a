// What the dashboard's server tests share: a hub served on a free loopback port (closed
// after the test through the caller's closers), and one plain GET that answers status and body.
import {request, type Server} from 'node:http'
import type {Hub} from '../../src/dashboard/hub.js'
import {createDashboardServer} from '../../src/dashboard/server.js'

/** serve `hub` on 127.0.0.1 at a free port; `closers` gets what ends it. Returns the port and the server. */
export async function serveHub(hub: Hub, roots: string[], closers: Array<() => Promise<void> | void>, token: string | null = null): Promise<{port: number; server: Server}> {
  await hub.start()
  const {server, setPort} = createDashboardServer({hub, roots, token, extraHosts: []})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  setPort(port)
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        hub.close()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return {port, server}
}

/** GET `p` with the Host header `host` (a fresh connection each time): its status and body */
export function get(port: number, p: string, host = `127.0.0.1:${port}`): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, path: p, agent: false, headers: {Host: host}}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.end()
  })
}
