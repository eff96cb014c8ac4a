// The dashboard's HTTP side on a real socket: only its own Host names are answered
// (DNS rebinding), only GET/HEAD, the token when one is set, and session logs only
// from the project's .helix-logs/, never through a symlink, always sanitized.
import {request} from 'node:http'
import {connect} from 'node:net'
import {mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {trackerText} from '../support/project.js'
import {Hub} from '../../src/dashboard/hub.js'
import {ProjectReader} from '../../src/dashboard/project-view.js'
import {allowedHosts, TOKEN_COOKIE} from '../../src/dashboard/server.js'
import {serveHub} from './serve.js'

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

function get(port: number, p: string, o: {method?: string; host?: string; headers?: Record<string, string>} = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, path: p, method: o.method ?? 'GET', headers: {Host: o.host ?? `127.0.0.1:${port}`, ...o.headers}}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length) await closers.pop()!()
})

async function serve(token: string | null = null) {
  const base = makeTempDir('helix-dash-server-')
  const root = path.join(base, 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  mkdirSync(path.join(root, '.helix-logs'))
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText([{id: 'hx-a', title: '<img src=x onerror=alert(1)>'}]))
  const lines = [JSON.stringify({level: 30, time: 0, msg: 'dispatch', dispatch: 1, action: 'implementation', agent: 'codex'}), JSON.stringify({level: 30, time: 0, msg: 'evil \u001b]0;title\u0007 line', stream: 'agent', dispatch: 1}), 'third']
  writeFileSync(path.join(root, '.helix-logs', 'helix-1.log'), lines.join('\n') + '\n')
  writeFileSync(path.join(base, 'secret.log'), 'SECRET\n')
  symlinkSync(path.join(base, 'secret.log'), path.join(root, '.helix-logs', 'helix-link.log'))
  const reader = new ProjectReader(0, root, {})
  const hub = new Hub({projects: [{root, read: (now) => reader.read(now)}], watch: () => ({close() {}})})
  const {port} = await serveHub(hub, [root], closers, token)
  return {port, root, base}
}

describe('dashboard server', () => {
  it('answers its own Host names only; GET and HEAD only', async () => {
    const {port} = await serve()
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) expect((await get(port, '/', {host})).status).toBe(200)
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1:${port + 1}`, `127.0.0.1.evil.example:${port}`]) {
      const r = await get(port, '/state.json', {host})
      expect(r.status).toBe(421)
      expect(r.body).not.toContain('hx-a')
    }
    // no Host at all (HTTP/1.0 over a raw socket)
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = connect(port, '127.0.0.1', () => sock.end('GET /state.json HTTP/1.0\r\n\r\n'))
      let text = ''
      sock.setEncoding('utf8')
      sock.on('data', (c: string) => (text += c))
      sock.on('end', () => resolve(text))
      sock.on('error', reject)
    })
    expect(raw).toMatch(/^HTTP\/1\.[01] 421 /)
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await get(port, '/', {method})
      expect(r.status).toBe(405)
      expect(r.headers.allow).toBe('GET, HEAD')
    }
    expect(allowedHosts(80, ['192.168.1.5', '::'])).toEqual(new Set(['127.0.0.1:80', 'localhost:80', '[::1]:80', '192.168.1.5:80', '[::]:80']))
  })

  it('the page has a strict CSP and no inline script; the state carries titles as data', async () => {
    const {port} = await serve()
    const page = await get(port, '/')
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/)
    expect(page.headers['content-security-policy']).not.toMatch(/unsafe-inline/)
    expect(page.body).not.toMatch(/<script>(?!<)|<script(?![^>]*src=)/)
    const state = JSON.parse((await get(port, '/state.json')).body)
    expect(state.projects[0].queue.ready[0].title).toBe('<img src=x onerror=alert(1)>')
    const svg = await get(port, '/chart/0/timeline.svg')
    expect(svg.headers['content-type']).toMatch(/^image\/svg\+xml/)
    expect(svg.body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    expect((await get(port, '/chart/7/timeline.svg')).status).toBe(404)
  })

  it('serves log lines from .helix-logs/ only, sanitized, never through a symlink or out of the folder', async () => {
    const {port, root, base} = await serve()
    const r = await get(port, '/log/0/helix-1.log?from=2&to=3')
    expect(r.status).toBe(200)
    expect(r.headers['content-type']).toMatch(/^text\/plain/)
    expect(r.body).toMatch(/^L2 {2}.*evil \?\]0;title\? line\nL3 {2}third\n$/)
    expect(r.body).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/)
    expect((await get(port, '/log/0/helix-link.log?from=1&to=1')).status).toBe(404)
    expect((await get(port, '/log/0/..%2Fsecret.log?from=1&to=1')).status).toBe(404)
    expect((await get(port, '/log/0/..%2F..%2Fsecret.log?from=1&to=1')).body).not.toContain('SECRET')
    expect((await get(port, '/log/1/helix-1.log?from=1&to=1')).status).toBe(400)
    expect((await get(port, '/log/0/helix-1.log?from=3&to=1')).status).toBe(400)
    // a symlinked .helix-logs is refused as a whole
    const other = path.join(base, 'other-logs')
    mkdirSync(other)
    writeFileSync(path.join(other, 'helix-2.log'), 'SECRET\n')
    symlinkSync(other, path.join(root, '.helix-logs', 'nested'))
    expect((await get(port, '/log/0/nested%2Fhelix-2.log?from=1&to=1')).status).toBe(404)
  })

  it('with a token, every request must carry it (query once, then a cookie, or a bearer header)', async () => {
    const {port} = await serve('s3cret')
    expect((await get(port, '/')).status).toBe(401)
    expect((await get(port, '/state.json?token=wrong')).status).toBe(401)
    const first = await get(port, '/?token=s3cret')
    expect(first.status).toBe(200)
    const cookie = String(first.headers['set-cookie']).split(';')[0]
    expect(cookie).toBe(`${TOKEN_COOKIE}=s3cret`)
    expect(String(first.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/)
    expect((await get(port, '/state.json', {headers: {Cookie: cookie}})).status).toBe(200)
    expect((await get(port, '/state.json', {headers: {Authorization: 'Bearer s3cret'}})).status).toBe(200)
    // a cookie that is not even a valid %-escape is no token: 401, not a server error
    expect((await get(port, '/state.json', {headers: {Cookie: `${TOKEN_COOKIE}=%E0%A4%A`}})).status).toBe(401)
    // the Host check comes first: a rebinding page with the token is still refused
    expect((await get(port, '/state.json?token=s3cret', {host: `evil.example:${port}`})).status).toBe(421)
  })
})
