// What the dashboard's browser tests share: Chromium (Debian's package), and `helix dashboard`
// opened in it: the page loaded, marked so that a reload would show (`window.__loaded`), and
// every dialog (a script of a title that ran) counted and dismissed.
import {existsSync} from 'node:fs'
import {expect} from 'vitest'
import type {Browser, Page} from 'playwright-core'
import {startCli, type CliChild} from '../support/cli.js'
import {waitFor} from '../support/wait.js'

export const CHROMIUM = '/usr/bin/chromium'
export const HAVE_CHROMIUM = existsSync(CHROMIUM)

export interface DashboardPage {
  dash: CliChild
  browser: Browser
  page: Page
  /** how many dialogs the page opened */
  dialogs: () => number
}

/** `helix dashboard --port 0` in `root`, and a Chromium page on it with the first project shown */
export async function openDashboard(root: string, env?: NodeJS.ProcessEnv): Promise<DashboardPage> {
  const dash = startCli(['dashboard', '--port', '0'], {cwd: root, env})
  await waitFor(() => /dashboard at/.test(dash.stdout) || dash.child.exitCode !== null, {timeoutMs: 20_000, what: 'the dashboard address'})
  const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(dash.stdout)?.[0]
  expect(url, dash.stderr).toBeDefined()
  const {chromium} = await import('playwright-core')
  const browser = await chromium.launch({executablePath: CHROMIUM, args: ['--no-sandbox']})
  try {
    const page = await browser.newPage()
    let dialogs = 0
    page.on('dialog', (d) => {
      dialogs++
      void d.dismiss()
    })
    await page.goto(url!)
    // a marker that a reload would wipe out
    await page.evaluate('window.__loaded = 1')
    await page.waitForSelector('section.project[data-project="0"]')
    return {dash, browser, page, dialogs: () => dialogs}
  } catch (error) {
    await browser.close()
    throw error
  }
}
