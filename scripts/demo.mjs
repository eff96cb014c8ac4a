#!/usr/bin/env node
// `npm run demo [-- --keep] [-- --as codex|claude|command] [-- --verbose] [-- --no-build]`
//
// Shows helix draining a real queue, offline, in well under a minute:
//   1. builds helix when dist/ or the oclif manifest is missing or older than src/;
//   2. copies fixtures/demo/ (a toy string library and its .ddx/beads.jsonl) into a
//      throw-away git repository under the system temp directory;
//   3. puts the scripted demo agent (fixtures/agents/demo-agent.mjs) first on PATH
//      as `codex` (or `claude`, or passes it as a command agent with --agent);
//   4. runs `helix run --summary` there with HELIX_BACKOFF_SLEEP=1, so the failed
//      attempt's retry is visible without the real 5 s backoff;
//   5. prints the commits the agent made and `helix status`;
//   6. removes the workspace, unless --keep was given (then prints its path).
//
// Exit code: helix run's exit code (0 when the demo worked).

import {spawn, spawnSync} from 'node:child_process'
import {cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const HELIX = path.join(REPO, 'bin', 'run.js')
const AGENT = path.join(REPO, 'fixtures', 'agents', 'demo-agent.mjs')
const FIXTURE = path.join(REPO, 'fixtures', 'demo')
const RUN_TIMEOUT_MS = 120_000

function usage() {
  return [
    'usage: npm run demo [-- --keep] [-- --as codex|claude|command] [-- --verbose] [-- --no-build]',
    '  --keep      keep the temporary workspace and print its path',
    '  --as KIND   how helix talks to the demo agent: codex (default), claude, command',
    '  --verbose   run helix in normal mode instead of --summary',
    '  --no-build  use dist/ as it is (never run npm run build; the tests use this)',
  ].join('\n')
}

function parseArgs(args) {
  const opts = {keep: false, as: 'codex', verbose: false, build: true}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === '--keep') opts.keep = true
    else if (a === '--verbose') opts.verbose = true
    else if (a === '--no-build') opts.build = false
    else if (a === '--as' || a.startsWith('--as=')) {
      const v = a === '--as' ? args[++i] : a.slice('--as='.length)
      if (!['codex', 'claude', 'command'].includes(v)) fail(`--as must be codex, claude or command (got '${v ?? ''}')`)
      opts.as = v
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(usage() + '\n')
      process.exit(0)
    } else fail(`unknown option '${a}'\n${usage()}`)
  }
  return opts
}

function fail(message) {
  process.stderr.write(`helix demo: ${message}\n`)
  process.exit(1)
}

function say(line = '') {
  process.stdout.write(line + '\n')
}

/** Newest modification time of any file below `dir` (0 when it does not exist). */
function newestMtime(dir) {
  let newest = 0
  let entries
  try {
    entries = readdirSync(dir, {withFileTypes: true})
  } catch {
    return 0
  }
  for (const e of entries) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) newest = Math.max(newest, newestMtime(p))
    else if (e.isFile()) newest = Math.max(newest, statSync(p).mtimeMs)
  }
  return newest
}

/**
 * Why `repo` needs `npm run build`, or null when it does not: dist/ or the oclif
 * manifest (written last by the build) is missing, or a file under src/ is newer
 * than the manifest. An installed package has no src/ and is never rebuilt.
 */
export function buildReason(repo) {
  const manifest = path.join(repo, 'oclif.manifest.json')
  const src = path.join(repo, 'src')
  if (!existsSync(path.join(repo, 'dist')) || !existsSync(manifest)) return 'no build yet'
  if (existsSync(src) && newestMtime(src) > statSync(manifest).mtimeMs) return 'src/ changed since the last build'
  return null
}

function ensureBuilt() {
  const reason = buildReason(REPO)
  if (!reason) return
  if (!existsSync(path.join(REPO, 'src'))) fail('dist/ is missing and there is no src/ to build it from')
  say(`helix demo: ${reason} — running npm run build`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  // The oclif dev tool (used for the manifest) would otherwise ask the npm registry
  // whether a newer oclif exists; the demo stays offline.
  const env = {...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true'}
  const r = spawnSync(npm, ['run', 'build'], {cwd: REPO, env, stdio: ['ignore', 2, 2]})
  if (r.status !== 0) fail(`npm run build failed (exit ${r.status ?? r.signal})`)
}

/** The environment helix and the agent run with: the user's, minus anything that would steer them elsewhere. */
function demoEnv(binDir) {
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue
    if (k.startsWith('HELIX_') || k.startsWith('DDX_')) continue
    if (['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY'].includes(k)) continue
    env[k] = v
  }
  env.PATH = binDir + path.delimiter + (process.env.PATH ?? '')
  env.NODE_ENV = 'production'
  env.HELIX_BACKOFF_SLEEP = '1'
  env.HELIX_AGENT_TIMEOUT = '60'
  return env
}

function git(cwd, args) {
  const r = spawnSync('git', args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})
  if (r.status !== 0) fail(`git ${args[0]} failed in ${cwd}: ${(r.stderr || r.stdout || '').trim()}`)
  return r.stdout
}

/** A single-quoted sh word (paths may hold spaces or quotes). */
function shQuote(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`
}

function makeWorkspace(base) {
  const project = path.join(base, 'strkit')
  cpSync(FIXTURE, project, {recursive: true})
  writeFileSync(path.join(project, '.gitignore'), '.helix-logs/\n.helix/\n.ddx/helix.pid\n.ddx/run-state.json\n.ddx/beads.lock/\n')
  git(project, ['init', '-q'])
  git(project, ['config', 'user.name', 'helix demo'])
  git(project, ['config', 'user.email', 'demo@helix.invalid'])
  git(project, ['config', 'commit.gpgsign', 'false'])
  // the user's global hooks (core.hooksPath) have no business in the demo
  git(project, ['config', 'core.hooksPath', '/dev/null'])
  git(project, ['add', '-A'])
  git(project, ['commit', '-q', '-m', 'strkit: toy project and its bead queue'])
  return project
}

/** Installs the demo agent as `codex` or `claude` (or a plain command) in binDir; returns helix run's agent flags. */
function installAgent(binDir, kind) {
  mkdirSync(binDir, {recursive: true})
  const name = kind === 'command' ? 'demo-agent' : kind
  const wrapper = path.join(binDir, name)
  writeFileSync(wrapper, `#!/bin/sh\nexec ${shQuote(process.execPath)} ${shQuote(AGENT)} "$@"\n`, {mode: 0o755})
  const agent = kind === 'command' ? wrapper : kind
  return {flags: ['--agent', agent, '--review-agent', agent], label: kind === 'command' ? `a command agent (${wrapper})` : `\`${kind}\` on PATH`}
}

function helixSync(project, env, args) {
  say(`$ helix ${args.join(' ')}`)
  const r = spawnSync(process.execPath, [HELIX, ...args], {cwd: project, env, stdio: ['ignore', 'inherit', 'inherit']})
  say()
  return r.status ?? 1
}

function helixRun(project, env, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HELIX, ...args], {cwd: project, env, stdio: ['ignore', 'inherit', 'inherit']})
    const timer = setTimeout(() => {
      process.stderr.write(`helix demo: helix run took longer than ${RUN_TIMEOUT_MS / 1000}s — stopping it\n`)
      child.kill('SIGTERM')
    }, RUN_TIMEOUT_MS)
    const forward = (sig) => () => child.kill(sig)
    const onInt = forward('SIGINT')
    const onTerm = forward('SIGTERM')
    process.on('SIGINT', onInt)
    process.on('SIGTERM', onTerm)
    child.on('error', (error) => {
      clearTimeout(timer)
      process.stderr.write(`helix demo: could not start helix: ${error.message}\n`)
      resolve(1)
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      process.off('SIGINT', onInt)
      process.off('SIGTERM', onTerm)
      resolve(code ?? (signal === 'SIGINT' ? 130 : 143))
    })
  })
}

function newestLog(project) {
  const dir = path.join(project, '.helix-logs')
  let names = []
  try {
    names = readdirSync(dir).filter((n) => /^helix-\d{8}-\d{6}.*\.log$/.test(n)).sort()
  } catch {
    return null
  }
  return names.length > 0 ? path.join(dir, names.at(-1)) : null
}

// helix events (and a few agent lines) that summary mode keeps out of the terminal
// but that show what the run decided; printed with their log line numbers.
const HIGHLIGHT_EVENTS = [
  /epic focus:/,
  /implementation failed during cycle/,
  /^backoff$/,
  /only backing-off issues remain/,
  /epic \S+ complete/,
  /review reported/,
  /queue drained|queue empty/,
  /stopping after check returned|no selectable issues/,
]
const HIGHLIGHT_AGENT = [/FAILED — not closing/, /\[demo-agent\] filed /, /^\s*NEXT_ACTION:/]

function highlights(file) {
  const out = []
  const seen = new Set()
  const lines = readFileSync(file, 'utf8').split('\n')
  lines.forEach((text, i) => {
    let rec
    try {
      rec = JSON.parse(text)
    } catch {
      return
    }
    if (!rec || typeof rec.msg !== 'string') return
    const patterns = rec.stream === 'agent' ? HIGHLIGHT_AGENT : HIGHLIGHT_EVENTS
    if (!patterns.some((re) => re.test(rec.msg))) return
    // claude repeats its final text in the result event: quote each agent line once per dispatch
    if (rec.stream === 'agent') {
      const key = `${rec.dispatch}\u0000${rec.msg}`
      if (seen.has(key)) return
      seen.add(key)
    }
    const who = rec.stream === 'agent' ? '  agent│ ' : '       '
    const fields = rec.msg === 'backoff' ? ['bead', 'attempts', 'seconds'].filter((k) => k in rec).map((k) => `  ${k}=${rec[k]}`).join('') : ''
    out.push(`  ${String(i + 1).padStart(4)}${who}${rec.msg}${fields}`)
  })
  return out
}

/** One line per bead that failed and was later completed, from run-state's cycle records. */
function retries(project) {
  let cycles = []
  try {
    cycles = JSON.parse(readFileSync(path.join(project, '.ddx', 'run-state.json'), 'utf8')).cycles ?? []
  } catch {
    return []
  }
  const out = []
  for (const c of cycles) {
    if (c.outcome !== 'COMPLETE' && c.outcome !== 'SALVAGED') continue
    const failed = cycles.filter((f) => f.bead === c.bead && f.n < c.n && (f.outcome === 'FAILED' || f.outcome === 'NOT_COMPLETED'))
    if (failed.length === 0) continue
    const others = cycles.filter((o) => o.n > failed.at(-1).n && o.n < c.n).length
    out.push(`Retry: ${c.bead} failed in cycle ${failed.map((f) => f.n).join(', ')}, waited out its backoff while ${others} other cycle(s) ran, and completed in cycle ${c.n}.`)
  }
  if (out.length > 0) out.push('')
  return out
}

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  if (opts.build) ensureBuilt()
  else if (!existsSync(path.join(REPO, 'oclif.manifest.json'))) fail('--no-build: helix is not built (run npm run build)')

  const base = mkdtempSync(path.join(os.tmpdir(), 'helix-demo-'))
  let rc = 1
  try {
    const project = makeWorkspace(base)
    const binDir = path.join(base, 'bin')
    const agent = installAgent(binDir, opts.as)
    const env = demoEnv(binDir)

    say('helix demo')
    say(`  workspace: ${project} (a fresh git repository seeded from fixtures/demo/)`)
    say(`  agent:     the scripted demo agent (fixtures/agents/demo-agent.mjs) as ${agent.label}`)
    say('             it is not a model: it edits files, runs node --test, commits and closes beads by script')
    say('  backoff:   HELIX_BACKOFF_SLEEP=1 (a failed bead is retried after 1 s instead of 5 s)')
    say()
    say('The queue before the run:')
    helixSync(project, env, ['tracker', 'list'])

    const runArgs = ['run', ...(opts.verbose ? [] : ['--summary']), '--review-threshold', '0', ...agent.flags]
    say(`$ helix ${runArgs.join(' ')}`)
    const t0 = Date.now()
    rc = await helixRun(project, env, runArgs)
    say()
    say(`helix run exited with ${rc} after ${((Date.now() - t0) / 1000).toFixed(1)}s`)
    say()
    if (rc === 130 || rc === 143) return

    const log = opts.verbose ? null : newestLog(project)
    if (log) {
      say(`Highlights from the session log (${path.relative(project, log)}; \`helix logs\` renders all of it):`)
      for (const line of highlights(log)) say(line)
      say()
    }
    for (const line of retries(project)) say(line)

    say('What the agent committed:')
    say('$ git log --oneline')
    process.stdout.write(git(project, ['log', '--oneline', '--no-decorate']))
    say()
    say('The queue after the run:')
    helixSync(project, env, ['tracker', 'list'])
    helixSync(project, env, ['status'])

    if (opts.keep) {
      say(`helix demo: kept the workspace at ${project}`)
      say(`  look around: cd ${shQuote(project)} && git log --stat && ls .helix-logs`)
      say(`  the agent wrapper is in ${binDir}; put it first on PATH to run helix there again`)
    }
  } finally {
    if (!opts.keep) {
      rmSync(base, {recursive: true, force: true})
      say('helix demo: workspace removed (keep it with: npm run demo -- --keep)')
    }
    process.exitCode = rc
  }
}

// Run only when executed (`node scripts/demo.mjs`), not when a test imports buildReason.
function isMain() {
  try {
    return Boolean(process.argv[1]) && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}
if (isMain()) await main()
