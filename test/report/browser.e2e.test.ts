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
import {morning, overnight} from './helpers.js'
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

      // one load (a chromium start is ~1.3 CPU-s): its DOM on stdout, its pixels, its net log
      const shot = path.join(root, 'shot.png')
      const net = path.join(root, 'net.json')
      const s = await browser(['--dump-dom', `--screenshot=${shot}`, '--window-size=1024,1400', `--log-net-log=${net}`, `file://${file}`], profile)
      expect(s.status).toBe(0)

      // DOM after load: the SVG elements exist as parsed elements
      expect(s.stdout.match(/<rect class="bar /g)).toHaveLength(10)
      expect(s.stdout.match(/<circle class="cum-point"/g)).toHaveLength(4)
      expect(s.stdout).not.toMatch(/<img/i)

      // pixels: the screenshot, then the bars found by colour (BAR = 20 px tall)
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

  it('the morning sections (issue 20): span, runs, failures with attempts, verdicts, left, a real time axis, no cost', async () => {
    const root = project({beads: []})
    try {
      morning(root, Date.now())
      // `--html` with no value: the page on stdout (helix report --html > report.html)
      const r = helix(root, ['report', '--html'])
      expect(r.code).toBe(0)
      const file = path.join(root, 'morning.html')
      writeFileSync(file, r.stdout)
      // one load: its DOM on stdout and its screenshot (checked at the end)
      const shot = path.join(root, 'morning.png')
      const dom = await browser(['--dump-dom', `--screenshot=${shot}`, '--window-size=1024,1800', `file://${file}`], path.join(dir, 'profile-morning'))
      expect(dom.status).toBe(0)
      const html = dom.stdout
      // text of the element with this id, tags stripped, entities of our escaping undone
      const section = (id: string) => {
        const m = new RegExp(`<div id="${id}">([\\s\\S]*?)</div>`).exec(html)
        return (m?.[1] ?? '').replace(/<[^>]+>/g, ' ').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim()
      }
      expect(html).toMatch(/<p class="muted" id="span">1 run, \d{4}-\d\d-\d\d \d\d:\d\d → (\d{4}-\d\d-\d\d )?\d\d:\d\d \(1h\)<\/p>/)
      expect(section('runs')).toMatch(/\.\/agent\.sh .*\b3\b 2 of 7 error: review output missing REVIEW_STATUS trailer/)
      const failures = section('failures')
      expect(failures).toMatch(/hx-b2 Write the output 1 \d\d:\d\d FAILED rc=1: tests failed closed on attempt 3 .*helix-morning\.log cycle 2/)
      // grouped by bead (issue 29): the bead's id and title once, then its attempts
      expect(failures).toMatch(/hx-g7 Flaky network test 1 \d\d:\d\d NOT_COMPLETED bead still open not closed .*cycle 3 2 \d\d:\d\d NOT_COMPLETED bead still open not closed .*cycle 5 3 \d\d:\d\d NOT_COMPLETED/)
      expect(failures.match(/hx-b2/g)).toHaveLength(1)
      expect(section('verdicts')).toMatch(/review hx-a1 CLEAN .*review hx-b2 ISSUES_FOUND \(2 issues\) .*check STOP/)
      expect(section('left')).toMatch(/hx-g7 Flaky network test blocked: failed 3 times .*hx-w8 Docs for the exporter waiting on hx-g7 .*hx-r9 Tidy the README ready/)
      expect(html).toMatch(/<b id="total-closed">3<\/b>/) // the epic's closure counted
      expect(html).not.toMatch(/\$\d/) // no agent reported a cost
      // the time axis: distinct tick labels
      const ticks = [...html.matchAll(/<text class="tick" [^>]*>([^<]+)<\/text>/g)].map((m) => m[1])
      const axis = ticks.slice(0, ticks.length - 2) // the cumulative chart's two end labels come last
      expect(axis.length).toBeGreaterThanOrEqual(3)
      expect(new Set(axis).size).toBe(axis.length)
      // and the page renders: the screenshot shows the bars of three slots
      const img = readPng(shot)
      const failed = colorBoxes(img, OUTCOME_COLORS.FAILED, {minH: 18, maxH: 22, minW: 3})
      expect(failed).toHaveLength(2)
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
