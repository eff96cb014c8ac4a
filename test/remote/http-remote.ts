// A bare repository served over smart HTTP on 127.0.0.1 by `git http-backend` (CGI), for
// tests that need an http(s) remote. `dateOffsetMs` skews the `Date` header the server
// sends, standing in for a remote whose clock differs from this host's.
import {spawn} from 'node:child_process'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import path from 'node:path'

export interface HttpRemote {
  url: string
  close(): Promise<void>
}

export async function serveBare(bare: string, opts: {dateOffsetMs?: number} = {}): Promise<HttpRemote> {
  const root = path.dirname(bare)
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1')
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(u.pathname),
        QUERY_STRING: u.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    })
    req.pipe(cgi.stdin)
    const chunks: Buffer[] = []
    cgi.stdout.on('data', (c: Buffer) => chunks.push(c))
    cgi.on('close', () => {
      const out = Buffer.concat(chunks)
      const end = out.indexOf('\r\n\r\n')
      const head = end >= 0 ? out.subarray(0, end).toString('latin1') : ''
      let status = 200
      for (const line of head.split('\r\n')) {
        const i = line.indexOf(':')
        if (i < 0) continue
        const k = line.slice(0, i).trim()
        const v = line.slice(i + 1).trim()
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10) || 200
        else res.setHeader(k, v)
      }
      res.setHeader('Date', new Date(Date.now() + (opts.dateOffsetMs ?? 0)).toUTCString())
      res.writeHead(status)
      res.end(end >= 0 ? out.subarray(end + 4) : out)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/${path.basename(bare)}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
