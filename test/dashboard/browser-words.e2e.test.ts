// Session 34's findings seen in Chromium: the page a paused run and a long queue make,
// then the same page after the run stopped for an unavailable agent, without a reload.
// - a pause says until when on the operator's clock and how long is left, and so does
//   a bead backing off (held back by the run);
// - a list of 150 ready beads shows its first 100 and says how many there are;
// - a title with a bidi override and an escape shows them as `?` (SPEC 13.5);
// - while the operator selects text the page holds still, and catches up after;
// - an ended run says why in status's words, with what stopped it.
import {spawn} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Browser, Page} from 'playwright-core'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import type {CliChild} from '../support/cli.js'
import {trackerText} from '../support/project.js'
import {waitFor} from '../support/wait.js'
import {HAVE_CHROMIUM, openDashboard} from './browser-page.js'


const SPOOF = 'pay invoice \u202Efdp.exe \u001b[31mred'
const UNAVAILABLE = "codex is not logged in: run 'codex login'"

describe.skipIf(!HAVE_CHROMIUM)('helix dashboard in Chromium: what the operator is told', () => {
  let root = ''
  let browser: Browser
  let page: Page
  let dash: CliChild
  let dialogs: () => number = () => 0
  const now = Date.now()
  const iso = (msAgo: number) => new Date(now - msAgo).toISOString()
  const runState = (over: Record<string, unknown>) => ({pid: 0, started_at: iso(600_000), updated_at: iso(1000), phase: 'paused', agent: 'codex', review_agent: null, current_cycle: 2, attempted_cycles: 1, completed_cycles: 0, closed_beads: [], skipped: [], attempts: {}, current_bead: null, current_bead_started_at: null, focused_epic: null, total_tokens: 0, cycles: [], stop_reason: null, last_run: null, parallel_run_denied_count: 0, ...over})

  beforeAll(async () => {
    root = path.join(makeTempDir('helix-dash-words-'), 'repo')
    mkdirSync(path.join(root, '.ddx'), {recursive: true})
    const beads = Array.from({length: 150}, (_, i) => ({id: `hx-${String(i).padStart(3, '0')}`, title: i === 0 ? SPOOF : `bead ${i}`}))
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText(beads))
    // a live run, paused for three days (a weekly quota): a process of ours holds the pid file
    const run = trackProcess(spawn('sleep', ['600'], {stdio: 'ignore'}))
    writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${run.pid} ${new Date().toISOString()}\n`)
    writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify(runState({pid: run.pid, paused_until: new Date(now + 72 * 3_600_000).toISOString(), pause_reason: 'quota: weekly limit', attempts: {'hx-007': 2}, backoff_until: {'hx-007': new Date(now + 600_000).toISOString()}})))

    ;({dash, browser, page, dialogs} = await openDashboard(root))
  })

  afterAll(async () => {
    await browser?.close()
    dash?.child.kill('SIGTERM')
    if (dash) await dash.done
  })

  it('a pause: until when, on the clock, and how long is left', async () => {
    const paused = await page.locator('.run-line + .ev-paused').textContent()
    expect(paused).toMatch(/^paused until \d\d:\d\d:\d\d \(in (71h 5\dm|72h 0m)\): quota: weekly limit$/)
    // and the same words among the last events
    expect(await page.locator('tr.ev-paused td').nth(1).textContent()).toBe(paused)
  })

  it('a bead backing off: held back by the run, why, and when it is tried again', async () => {
    const row = page.locator('tr.held-bead[data-bead="hx-007"] td')
    expect(await row.nth(2).textContent()).toBe('backoff after 2 failed attempts')
    expect(await row.nth(3).textContent()).toMatch(/^\d\d:\d\d:\d\d \(in (9m \d+s|10m 0s|\d+s)\)$/)
    expect(await page.locator('h3', {hasText: /^Held back/}).textContent()).toBe('Held back by this run (1)')
  })

  it('150 ready beads: the first 100 shown, the count of all', async () => {
    expect(await page.locator('h3', {hasText: /^Ready \(/}).textContent()).toBe('Ready (150; the first 100 shown)')
  })

  it('a bidi override and an escape in a title show as ?', async () => {
    const shown = await page.evaluate(`[...document.querySelectorAll('td')].map((t) => t.textContent).find((t) => t.startsWith('pay invoice'))`)
    expect(shown).toBe('pay invoice ?fdp.exe ?[31mred')
    expect(dialogs()).toBe(0)
  })

  it('holds still while the operator selects text, and catches up once the selection is gone', async () => {
    // select the title of hx-001 as a person would, to copy it
    const select = `(() => { const td = [...document.querySelectorAll('td')].find((t) => t.textContent === 'bead 1'); td.__mark = 1; const r = document.createRange(); r.selectNodeContents(td); const s = getSelection(); s.removeAllRanges(); s.addRange(r); return s.toString() })()`
    expect(await page.evaluate(select)).toBe('bead 1')
    const version = Number(await page.evaluate(`document.body.getAttribute('data-version')`))
    const beads = Array.from({length: 150}, (_, i) => ({id: `hx-${String(i).padStart(3, '0')}`, title: i === 0 ? SPOOF : i === 2 ? 'bead 2, renamed' : `bead ${i}`}))
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText(beads))
    await waitFor(async () => Number(await page.evaluate(`document.body.getAttribute('data-version')`)) > version, {timeoutMs: 30_000, intervalMs: 100, what: 'the new state at the page'})
    expect(await page.evaluate(`getSelection().toString()`)).toBe('bead 1')
    expect(await page.evaluate(`[...document.querySelectorAll('td')].some((t) => t.__mark === 1)`)).toBe(true)
    expect(await page.textContent('#conn')).toBe('live · held while text is selected')
    await page.evaluate(`getSelection().removeAllRanges()`)
    const renamed = `[...document.querySelectorAll('td')].some((t) => t.textContent === 'bead 2, renamed')`
    await waitFor(() => page.evaluate(renamed), {timeoutMs: 10_000, intervalMs: 50, what: 'the page caught up'})
    expect(await page.textContent('#conn')).toMatch(/^live · updated /)
  })

  it('the run stops for an unavailable agent: the page says so in words, without a reload', async () => {
    writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify(runState({phase: 'stopped', stop_reason: 'agent_unavailable', stop_message: UNAVAILABLE})))
    const said = `/^last run ended: agent_unavailable \\(codex is not logged in/.test(document.querySelector('.run-line').textContent)`
    await waitFor(() => page.evaluate(said), {timeoutMs: 30_000, intervalMs: 100, what: 'the stop in words on the page'})
    expect(await page.locator('.run-line').textContent()).toMatch(/^last run ended: agent_unavailable \(codex is not logged in: run 'codex login'\) — 0 completed of 1 attempted/)
    expect(await page.evaluate('window.__loaded === 1')).toBe(true)
  })
})
