#!/usr/bin/env node
// Takes docs/dashboard.png: `helix dashboard --remote origin` over a made-up night (a
// finished run in the history, a live run with one busy slot, a blocked bead, a bead
// waiting on it, and two hosts' claims on a bare remote), shot in Chromium with
// playwright-core. Needs a build (npm run build) and /usr/bin/chromium.
// Usage: node scripts/dashboard-shot.mjs [out.png]
import {execFileSync, spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const out = path.resolve(process.argv[2] ?? path.join(repo, 'docs', 'dashboard.png'))
const started = new Date()
const base = mkdtempSync(path.join(os.tmpdir(), 'helix-dash-shot-'))
const env = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C', NODE_ENV: 'production'}
const git = (cwd, ...args) => execFileSync('git', args, {cwd, env, encoding: 'utf8'}).trim()
const iso = (minAgo) => new Date(started.getTime() - minAgo * 60_000).toISOString()

let dash = null
try {
  const remote = path.join(base, 'remote.git')
  const root = path.join(base, 'strkit')
  git(base, 'init', '-q', '--bare', '-b', 'main', remote)
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  git(root, 'init', '-q', '-b', 'main')
  git(root, 'config', 'user.email', 'op@example.com')
  git(root, 'config', 'user.name', 'Operator')
  const bead = (id, title, more = {}) => ({id, title, status: 'open', priority: 2, issue_type: 'task', created_at: iso(600), updated_at: iso(300), ...more})
  const beads = [
    bead('sk-01', 'Add slugify() with unicode folding', {status: 'closed', updated_at: iso(170)}),
    bead('sk-02', 'Truncate on word boundaries', {status: 'closed', updated_at: iso(130)}),
    bead('sk-03', 'Pad and center helpers', {status: 'closed', updated_at: iso(95)}),
    bead('sk-04', 'camelCase / snake_case conversions', {status: 'closed', updated_at: iso(40)}),
    bead('sk-05', 'Wrap text at a column width'),
    bead('sk-06', 'Levenshtein distance for did-you-mean', {labels: ['blocked'], notes: 'BLOCKED: blocked after 4 attempts; last: rc=1: tests fail (distance("", "a") returned 0)', updated_at: iso(25)}),
    bead('sk-07', 'Fuzzy suggestions built on the distance', {dependencies: [{issue_id: 'sk-07', depends_on_id: 'sk-06', type: 'blocks'}]}),
    bead('sk-08', 'Escape strings for shells'),
    bead('sk-09', 'Document the API in the README'),
    bead('sk-10', 'Benchmarks for the hot paths'),
  ]
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), beads.map((b) => JSON.stringify(b)).join('\n') + '\n')
  writeFileSync(path.join(root, '.gitignore'), '.helix/\n.helix-logs/\n.ddx/helix.pid\n.ddx/run-state.json\n')
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', 'strkit: the queue')
  git(root, 'remote', 'add', 'origin', remote)
  git(root, 'push', '-q', 'origin', 'main')

  // two hosts' claims on the remote (SPEC 19.1): live ones, and one long expired
  const empty = git(root, 'hash-object', '-t', 'tree', '-w', '/dev/null')
  const claim = (id, host, minAgo, leaseMin) => {
    const msg = JSON.stringify({host, run: `${host}-run`, pid: 4242, attempt: 1, claimed_at: iso(minAgo), expires_at: iso(minAgo - leaseMin)})
    const sha = git(root, 'commit-tree', '-m', msg, empty)
    git(root, 'push', '-q', 'origin', `${sha}:refs/helix/claims/${id}`)
  }
  claim('sk-05', 'build-box-2', 3, 5)
  claim('sk-08', 'laptop-ana', 1, 5)
  claim('sk-10', 'old-mac', 30, 5)

  // the history: an earlier run of the night, with a failure and the block
  const cyc = (n, slot, bead, title, outcome, from, to, reason = null) => ({n, slot, bead, title, outcome, reason, started_at: iso(from), ended_at: iso(to), duration_ms: (from - to) * 60_000, tokens: 40_000 + n * 3_000, cost_usd: 0, commits: outcome === 'COMPLETE' ? [String(n).repeat(12)] : []})
  const cycles = [
    cyc(1, 1, 'sk-01', 'Add slugify() with unicode folding', 'COMPLETE', 190, 170),
    cyc(2, 2, 'sk-06', 'Levenshtein distance for did-you-mean', 'FAILED', 190, 176, 'rc=1: tests fail'),
    cyc(3, 2, 'sk-02', 'Truncate on word boundaries', 'COMPLETE', 175, 130),
    cyc(4, 1, 'sk-06', 'Levenshtein distance for did-you-mean', 'FAILED', 168, 150, 'rc=1: tests fail'),
    cyc(5, 1, 'sk-03', 'Pad and center helpers', 'COMPLETE', 148, 95),
    cyc(6, 2, 'sk-06', 'Levenshtein distance for did-you-mean', 'STALLED', 128, 110, 'stalled (no output for 300s)'),
    cyc(7, 2, 'sk-06', 'Levenshtein distance for did-you-mean', 'FAILED', 108, 90, 'rc=1: tests fail'),
  ]
  mkdirSync(path.join(root, '.helix-logs'))
  const run1 = {v: 1, started_at: iso(192), ended_at: iso(88), agent: 'claude', workers: 2, attempted: 7, completed: 3, tokens: cycles.reduce((s, c) => s + c.tokens, 0), stop_reason: 'blocked', cycles, blockers: [{id: 'sk-06', title: 'Levenshtein distance for did-you-mean', reason: 'blocked after 4 attempts; last: rc=1: tests fail', attempts: 4}], log: null}
  writeFileSync(path.join(root, '.helix-logs', 'runs.jsonl'), JSON.stringify(run1) + '\n')

  // the run going on now: this script stands in for its process (a live pid file)
  const log = path.join(root, '.helix-logs', 'helix-20261127-013000.log')
  const rec = (o) => JSON.stringify({level: 30, time: started.getTime(), ...o})
  writeFileSync(log, [rec({msg: 'run start'}), rec({msg: 'dispatch', dispatch: 1, slot: 1, bead: 'sk-04', action: 'implementation', agent: 'claude'}), rec({msg: 'done', stream: 'agent', dispatch: 1, slot: 1, bead: 'sk-04'}), rec({msg: 'dispatch end', dispatch: 1, slot: 1, bead: 'sk-04', rc: 0}), rec({msg: 'dispatch', dispatch: 2, slot: 1, bead: 'sk-09', action: 'implementation', agent: 'claude'}), rec({msg: 'Editing README.md: the API table for wrap() and pad()', stream: 'agent', dispatch: 2, slot: 1, bead: 'sk-09'})].join('\n') + '\n')
  writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${process.pid} ${started.toISOString()}\n`)
  const now = [cyc(8, 1, 'sk-04', 'camelCase / snake_case conversions', 'COMPLETE', 70, 40)]
  const rs = {pid: process.pid, started_at: iso(72), updated_at: iso(0), phase: 'implementing', agent: 'claude', review_agent: null, current_cycle: 2, attempted_cycles: 1, completed_cycles: 1, closed_beads: ['sk-04'], skipped: [], attempts: {}, current_bead: 'sk-09', current_bead_started_at: iso(6), focused_epic: null, total_tokens: 52_000, cycles: now, stop_reason: null, last_run: null, parallel_run_denied_count: 0, log, max_cycles: 10, workers: [{slot: 1, bead: 'sk-09', title: 'Document the API in the README', attempt: 1, started_at: iso(6), worktree: null, branch: null, pid: null, timeout_s: 3600, last_output: null}]}
  writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify(rs))

  dash = spawn(process.execPath, [path.join(repo, 'bin', 'run.js'), 'dashboard', '--port', '0', '--remote', 'origin'], {cwd: root, env, stdio: ['ignore', 'pipe', 'inherit']})
  const url = await new Promise((resolve, reject) => {
    let text = ''
    dash.stdout.on('data', (d) => {
      text += d
      const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(text)
      if (m) resolve(m[0])
    })
    dash.on('exit', (code) => reject(new Error(`dashboard exited ${code}`)))
  })
  const {chromium} = await import('playwright-core')
  const browser = await chromium.launch({executablePath: '/usr/bin/chromium', args: ['--no-sandbox']})
  try {
    const page = await browser.newPage({viewport: {width: 1280, height: 900}})
    await page.goto(url)
    await page.locator('table.fleet tr.claim').first().waitFor({timeout: 30_000})
    // the event stream never goes idle: wait for the chart images instead
    for (let i = 0; i < 100 && !(await page.evaluate("[...document.images].every((i) => i.complete && i.naturalWidth > 0)")); i++) await new Promise((r) => setTimeout(r, 100))
    await page.screenshot({path: out, fullPage: true})
    console.log(`wrote ${out}`)
  } finally {
    await browser.close()
  }
} finally {
  dash?.kill('SIGTERM')
  rmSync(base, {recursive: true, force: true})
}
