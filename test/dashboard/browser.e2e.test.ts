// SPEC 22.1's proof in a real browser: Chromium (Debian's, driven by playwright-core)
// opens the page once while `helix run --workers 2` drains three beads with a scripted
// agent. Without a reload the page shows a running slot's last output line, turns a
// bead's row from running to landed within 2 s of its landing (the moment the base
// branch's ref moves), and after the run shows every bead landed and no slot busy. A
// hostile title renders as text and runs nothing.
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readFileSync, watch, writeFileSync, type FSWatcher} from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Browser, Page} from 'playwright-core'
import {makeTempDir} from '../support/tmp.js'
import {startCli, type CliChild} from '../support/cli.js'
import {waitFor} from '../support/wait.js'
import {CHROMIUM, HAVE_CHROMIUM, openDashboard} from './browser-page.js'
import {gitSeq} from '../support/git.js'

if (!HAVE_CHROMIUM) console.warn(`dashboard browser test skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`)

const GIT_ISOLATED = {GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
const g = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, {cwd, env: {...process.env, ...GIT_ISOLATED}, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

const HOSTILE = '<img src=x onerror="window.__pwned=1;alert(1)">'

/** prints a line, waits at its gate ($WSTUB/go-<id>), commits, closes its bead */
const AGENT = `#!/bin/sh
cat >/dev/null
if [ "$HELIX_ACTION" = implementation ]; then
  echo "working on $HELIX_BEAD_ID: step one"
  while [ ! -e "$WSTUB/go-$HELIX_BEAD_ID" ]; do sleep 0.05; done
  echo "$HELIX_BEAD_ID" > "$HELIX_BEAD_ID.txt"
  git add "$HELIX_BEAD_ID.txt" && git commit -q -m "work on $HELIX_BEAD_ID" || exit 1
  helix tracker close "$HELIX_BEAD_ID" >/dev/null || exit 1
  echo "done $HELIX_BEAD_ID"
else
  echo "NEXT_ACTION: STOP"
fi
`

describe.skipIf(!HAVE_CHROMIUM)('helix dashboard in Chromium during a --workers 2 run', () => {
  let base = ''
  let root = ''
  let browser: Browser
  let page: Page
  let dash: CliChild
  let run: CliChild
  let dialogs: () => number = () => 0
  let refWatch: FSWatcher | null = null
  const env = {...GIT_ISOLATED, HELIX_AUTO_ALIGN: '0', HELIX_BACKOFF_SLEEP: '0'}

  beforeAll(async () => {
    base = makeTempDir('helix-dash-browser-')
    root = path.join(base, 'repo')
    mkdirSync(path.join(root, '.ddx'), {recursive: true})
    gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
    const beads = [
      {id: 'hx-a', title: 'first bead'},
      {id: 'hx-b', title: 'second bead'},
      {id: 'hx-c', title: HOSTILE},
    ].map((b, i) => JSON.stringify({...b, status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:0${i}Z`}))
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), beads.join('\n') + '\n')
    writeFileSync(path.join(root, 'README.md'), 'readme\n')
    gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
    writeFileSync(path.join(base, 'agent.sh'), AGENT)
    chmodSync(path.join(base, 'agent.sh'), 0o755)

    ;({dash, browser, page, dialogs} = await openDashboard(root, env))
    run = startCli(['run', '--agent', path.join(base, 'agent.sh'), '--no-auto-review', '--workers', '2', '--summary'], {cwd: root, env: {...env, WSTUB: base}})
  })

  afterAll(async () => {
    refWatch?.close()
    await browser?.close()
    dash?.child.kill('SIGTERM')
    if (dash) await dash.done
  })

  const gate = (id: string) => writeFileSync(path.join(base, `go-${id}`), '')
  const notReloaded = () => page.evaluate('window.__loaded === 1')

  it("shows a running slot's last output line live", async () => {
    const slot = page.locator('.slot[data-bead="hx-a"] .last-output')
    await slot.filter({hasText: 'working on hx-a: step one'}).waitFor({timeout: 30_000})
    await page.locator('.slot[data-bead="hx-b"] .last-output').filter({hasText: 'working on hx-b: step one'}).waitFor({timeout: 30_000})
    expect(await page.getAttribute('tr.run-bead[data-bead="hx-a"]', 'data-state')).toBe('running')
    expect(await notReloaded()).toBe(true)
  })

  it('turns the row from running to landed within 2 s of the landing', async () => {
    const refs = path.join(root, '.git', 'refs', 'heads')
    const before = readFileSync(path.join(refs, 'main'), 'utf8')
    let landedAt = 0
    // the landing is the moment main's ref moves: watched, not polled
    refWatch = watch(refs, () => {
      if (landedAt === 0 && existsSync(path.join(refs, 'main')) && readFileSync(path.join(refs, 'main'), 'utf8') !== before) landedAt = Date.now()
    })
    gate('hx-a')
    await page.waitForSelector('tr.run-bead[data-bead="hx-a"][data-state="landed"]', {timeout: 30_000})
    const shownAt = Date.now()
    expect(landedAt, 'main moved').toBeGreaterThan(0)
    expect(g(root, 'log', '--format=%s', 'main')).toContain('work on hx-a')
    expect(shownAt - landedAt).toBeLessThan(2000)
    expect(await notReloaded()).toBe(true)
  })

  it('after the run shows every bead landed and no slot running, without a reload', async () => {
    gate('hx-b')
    gate('hx-c')
    const end = await run.done
    expect(end.code, end.stderr).toBe(0)
    // polled from outside (CDP evaluation): the page's CSP rightly forbids the eval waitForFunction would need
    const done = `document.querySelectorAll('tr.run-bead[data-state="landed"]').length === 3 && document.querySelectorAll('.slot').length === 0 && /^last run ended/.test(document.querySelector('.run-line').textContent)`
    await waitFor(() => page.evaluate(done), {timeoutMs: 30_000, intervalMs: 100, what: 'every bead landed and the run ended, on the page'})
    expect(await page.locator('.run-line').textContent()).toMatch(/^last run ended: completed \(stopping after check returned STOP\) — 3 completed of 3 attempted/)
    expect(await notReloaded()).toBe(true)
  })

  it('renders a hostile title as text and runs nothing', async () => {
    const cell = page.locator('tr.run-bead[data-bead="hx-c"] td').nth(1)
    expect(await cell.textContent()).toBe(HOSTILE)
    expect(await cell.locator('img').count()).toBe(0)
    expect(await page.locator('img:not(.chart)').count()).toBe(0)
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined')
    expect(dialogs()).toBe(0)
  })
})
