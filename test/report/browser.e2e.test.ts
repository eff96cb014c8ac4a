/**
 * The `helix report --html` page in a real headless browser (Debian's chromium):
 * it renders the bars and points (DOM after load, and pixels in a screenshot), and
 * no request leaves the file. When chromium is missing, the setup installs it with
 * apt-get; only when that fails are these tests skipped, and the skip says why.
 */
import {spawn, spawnSync} from 'node:child_process'
import {createServer, type Server} from 'node:http'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {helix, project} from '../operator/helpers.js'
import {overnight} from './helpers.js'
import {colorBoxes, readPng} from './png.js'
import {OUTCOME_COLORS} from '../../src/report/html.js'
import {makeTempDir} from '../support/tmp.js'

function findChromium(): string | null {
  for (const bin of ['chromium', 'chromium-browser']) if (spawnSync(bin, ['--version'], {stdio: 'ignore'}).status === 0) return bin
  return null
}

let chromium = findChromium()
let whyMissing = ''
if (!chromium) {
  const aptEnv = {...process.env, DEBIAN_FRONTEND: 'noninteractive'}
  const install = () => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {encoding: 'utf8', timeout: 600_000, env: aptEnv})
  let r = install()
  // a fresh machine has no package lists yet: fetch them once, then try again
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], {encoding: 'utf8', timeout: 300_000, env: aptEnv})
    r = install()
  }
  chromium = findChromium()
  if (!chromium) whyMissing = `chromium is not installed and 'apt-get install -y chromium' failed (exit ${r.status}): ${(r.stderr || r.error?.message || '').trim().split('\n').at(-1)}`
}
if (!chromium) console.warn(`SKIPPED browser checks of helix report --html: ${whyMissing}`)

const BASE = [
  '--headless',
  '--no-sandbox', // we run as root in CI containers
  '--disable-gpu',
  '--hide-scrollbars',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--force-device-scale-factor=1',
]

/** Runs chromium without blocking the event loop (the test's HTTP server must keep answering). */
function browser(args: string[], profile: string): Promise<{stdout: string; status: number | null}> {
  return new Promise((resolve) => {
    const c = spawn(chromium!, [...BASE, `--user-data-dir=${profile}`, ...args], {stdio: ['ignore', 'pipe', 'ignore']})
    let stdout = ''
    c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    const timer = setTimeout(() => c.kill('SIGKILL'), 90_000)
    c.on('close', (status) => {
      clearTimeout(timer)
      resolve({stdout, status})
    })
  })
}

/**
 * Requests the page made, from chromium's net log: URL requests whose initiator
 * is the page (a file: document's origin is `null`). Chromium's own background
 * requests carry `initiator: "not an origin"`. The control test below shows the
 * detector sees a page's request.
 */
function pageRequests(netLog: string): string[] {
  const log = JSON.parse(readFileSync(netLog, 'utf8'))
  const names: Record<string, number> = log.constants.logEventTypes
  const start = names.URL_REQUEST_START_JOB
  return log.events
    .filter((e: {type: number; params?: {initiator?: string; url?: string}}) => e.type === start && e.params?.url && e.params.initiator !== 'not an origin')
    .map((e: {params: {url: string}}) => e.params.url)
}

describe.runIf(chromium)('helix report --html in headless chromium', () => {
  let dir: string
  let server: Server
  let port = 0
  const hits: string[] = []

  beforeAll(async () => {
    dir = makeTempDir('helix-browser-')
    server = createServer((req, res) => {
      hits.push(req.url ?? '')
      res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as {port: number}).port
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
    rmSync(dir, {recursive: true, force: true})
  })

  it('control: the net-log detector and the local server see a page that does make a request', async () => {
    const page = path.join(dir, 'leaky.html')
    writeFileSync(page, `<!doctype html><html><body><img src="http://127.0.0.1:${port}/leak.png"></body></html>`)
    const net = path.join(dir, 'leaky-net.json')
    const r = await browser([`--log-net-log=${net}`, '--screenshot=' + path.join(dir, 'leaky.png'), '--window-size=400,300', `file://${page}`], path.join(dir, 'profile-leaky'))
    expect(r.status).toBe(0)
    expect(pageRequests(net)).toContain(`http://127.0.0.1:${port}/leak.png`)
    expect(hits).toContain('/leak.png')
    hits.length = 0
  })

  it('renders one bar per cycle and one point per closed bead, coloured by outcome, and makes no request', async () => {
    const root = project({beads: []})
    try {
      // a title that would fetch from our server if it were not escaped
      overnight(root, Date.now(), `<img src="http://127.0.0.1:${port}/title.png">`)
      const file = path.join(root, 'report.html')
      expect(helix(root, ['report', '--html', file]).code).toBe(0)
      const profile = path.join(dir, 'profile-report')

      // DOM after load: the SVG elements exist as parsed elements
      const dom = await browser(['--dump-dom', `file://${file}`], profile)
      expect(dom.status).toBe(0)
      expect(dom.stdout.match(/<rect class="bar /g)).toHaveLength(10)
      expect(dom.stdout.match(/<circle class="cum-point"/g)).toHaveLength(4)
      expect(dom.stdout).not.toMatch(/<img/i)

      // pixels: a screenshot, then the bars found by colour (BAR = 20 px tall)
      const shot = path.join(root, 'shot.png')
      const net = path.join(root, 'net.json')
      const s = await browser([`--screenshot=${shot}`, '--window-size=1024,1400', `--log-net-log=${net}`, `file://${file}`], profile)
      expect(s.status).toBe(0)
      const img = readPng(shot)
      expect(img.width).toBe(1024)
      const bars = (outcome: string) => colorBoxes(img, OUTCOME_COLORS[outcome], {minH: 18, maxH: 22, minW: 3})
      const counts = Object.fromEntries(['COMPLETE', 'FAILED', 'TIMEOUT', 'NOT_LANDED', 'NOT_COMPLETED', 'STALLED'].map((o) => [o, bars(o).length]))
      expect(counts).toEqual({COMPLETE: 4, FAILED: 1, TIMEOUT: 1, NOT_LANDED: 1, NOT_COMPLETED: 2, STALLED: 1})
      // two slot rows: every bar sits on one of two rows
      const rows = new Set(Object.keys(counts).flatMap((o) => bars(o).map((b) => b.y)))
      expect(rows.size).toBe(2)

      // no request left the file
      expect(pageRequests(net)).toEqual([])
      expect(hits).toEqual([])
    } finally {
      rmSync(root, {recursive: true, force: true})
    }
  })
})

if (!chromium) {
  describe('helix report --html in headless chromium', () => {
    it.skip(`SKIPPED: ${whyMissing}`, () => {})
  })
}
