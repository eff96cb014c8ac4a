/**
 * The dashboard's HTTP side (SPEC 22.1) on node:http: one page, its script and style,
 * the state as Server-Sent Events (and as JSON), the report's two charts as SVG
 * images, and session-log ranges as plain text. Read-only: GET and HEAD only
 * (405 otherwise). A request is answered only when its Host names this server
 * (DNS rebinding), and, with a token, only when it carries the token.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import {timingSafeEqual} from 'node:crypto'
import path from 'node:path'
import {cumulativeSvg, timelineSvg} from '../report/html.js'
import type {Hub} from './hub.js'
import {renderLogRange} from './log-files.js'
import {sseSubscriber} from './sse.js'
import {CSP, PAGE_CSS, PAGE_HTML, PAGE_JS, SVG_CSS} from './page.js'

export interface ServerOptions {
  hub: Hub
  /** project roots, by index (the log URLs name the index) */
  roots: string[]
  token: string | null
  /** Host header values accepted besides the loopback names (`--listen`'s address) */
  extraHosts: string[]
}

export const TOKEN_COOKIE = 'helix_dashboard_token'

/** The Host values this server answers at `port`. */
export function allowedHosts(port: number, extra: string[]): Set<string> {
  const names = ['127.0.0.1', 'localhost', '[::1]', ...extra.map((h) => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h))]
  return new Set(names.map((h) => `${h.toLowerCase()}:${port}`))
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

function cookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k !== name) continue
    try {
      return decodeURIComponent(v.join('='))
    } catch {
      return null // a malformed %-escape is no token (401), not a server error
    }
  }
  return null
}

const BASE_HEADERS = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
}

function send(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {...BASE_HEADERS, 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(body)), ...extra})
  res.end(res.req.method === 'HEAD' ? undefined : body)
}

/** The report's chart as a standalone SVG image (its styles inside, so it draws alone). */
function chartImage(svg: string): string {
  const body = svg.startsWith('<svg') ? svg : `<svg width="960" height="40" viewBox="0 0 960 40"><text x="8" y="24">${svg.replace(/<[^>]*>/g, '')}</text></svg>`
  return body.replace(/^<svg /, `<svg xmlns="http://www.w3.org/2000/svg" `).replace(/^(<svg[^>]*>)/, `$1<style>${SVG_CSS}</style>`)
}

export function createDashboardServer(o: ServerOptions): {server: Server; setPort(port: number): void} {
  let hosts = new Set<string>()
  const server = createServer((req, res) => {
    try {
      handle(req, res)
    } catch {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n')
      else res.destroy()
    }
  })
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').toLowerCase()
    if (!hosts.has(host)) return send(res, 421, 'text/plain; charset=utf-8', 'unknown host\n')
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'read-only: GET only\n', {Allow: 'GET, HEAD'})
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid')
    const extra: Record<string, string> = {}
    if (o.token !== null) {
      const auth = req.headers.authorization
      const given = url.searchParams.get('token') ?? (auth?.startsWith('Bearer ') ? auth.slice(7) : null) ?? cookie(req, TOKEN_COOKIE)
      if (given === null || !sameToken(given, o.token)) return send(res, 401, 'text/plain; charset=utf-8', 'a token is needed: open the address with ?token=…\n')
      // the page's own requests (script, events, images) carry it as a cookie from here on
      if (url.searchParams.has('token')) extra['Set-Cookie'] = `${TOKEN_COOKIE}=${encodeURIComponent(o.token)}; HttpOnly; SameSite=Strict; Path=/`
    }
    const p = url.pathname
    if (p === '/') return send(res, 200, 'text/html; charset=utf-8', PAGE_HTML, extra)
    if (p === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', PAGE_JS)
    if (p === '/app.css') return send(res, 200, 'text/css; charset=utf-8', PAGE_CSS)
    if (p === '/state.json') return send(res, 200, 'application/json; charset=utf-8', o.hub.json)
    if (p === '/events') return events(req, res)
    let m = /^\/chart\/(\d{1,4})\/(timeline|cumulative)\.svg$/.exec(p)
    if (m) {
      const r = o.hub.report(Number(m[1]))
      if (!r) return send(res, 404, 'text/plain; charset=utf-8', 'no such chart\n')
      return send(res, 200, 'image/svg+xml; charset=utf-8', chartImage(m[2] === 'timeline' ? timelineSvg(r) : cumulativeSvg(r)))
    }
    m = /^\/log\/(\d{1,4})\/([^/]{1,220})$/.exec(p)
    if (m) {
      const root = o.roots[Number(m[1])]
      const from = Number(url.searchParams.get('from') ?? '1')
      const to = Number(url.searchParams.get('to') ?? '0')
      const slotText = url.searchParams.get('slot')
      const slot = slotText === null || slotText === '' ? null : Number(slotText)
      if (!root || !Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < from || to - from > 100_000 || (slot !== null && !Number.isInteger(slot)))
        return send(res, 400, 'text/plain; charset=utf-8', 'expected /log/<project>/<file>?from=A&to=B[&slot=N]\n')
      let name: string
      try {
        name = decodeURIComponent(m[2])
      } catch {
        return send(res, 400, 'text/plain; charset=utf-8', 'bad file name\n')
      }
      // read without holding the event loop (log-files.ts); the answer follows when it is done
      void renderLogRange(path.join(root, '.helix-logs'), name, from, to, slot).then(
        (text) => {
          if (res.destroyed) return
          if (text === null) send(res, 404, 'text/plain; charset=utf-8', 'no such log in .helix-logs/\n')
          else send(res, 200, 'text/plain; charset=utf-8', text)
        },
        () => {
          if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n')
          else res.destroy()
        },
      )
      return
    }
    return send(res, 404, 'text/plain; charset=utf-8', 'not found\n')
  }
  const events = (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, {...BASE_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive'})
    if (req.method === 'HEAD') return res.end()
    res.write('retry: 2000\n\n')
    // a page that stops reading gets the newest state when it reads again, not every one (sse.ts)
    const off = o.hub.subscribe(sseSubscriber(res))
    const end = () => off()
    req.on('close', end)
    res.on('error', end)
  }
  return {
    server,
    setPort(port: number) {
      hosts = allowedHosts(port, o.extraHosts)
    },
  }
}
