#!/usr/bin/env node
// `npm run test:agents`: the real agent CLIs, end to end (SPEC 14).
// 1. Installs the pinned real CLIs once into a cache outside the repo
//    (HELIX_AGENTS_CACHE, default ~/.cache/helix/agents; ~640 MB, not devDependencies).
// 2. Builds helix (the tests spawn bin/run.js from dist/).
// 3. Runs test/real-agents/*.agents.ts with vitest (never part of `npm test`).
// No credentials and no network are needed: that is the point of the tests.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const PINS = {'@anthropic-ai/claude-code': '2.1.197', '@openai/codex': '0.169.0'}
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cache = process.env.HELIX_AGENTS_CACHE || path.join(os.homedir(), '.cache', 'helix', 'agents')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function installedVersion(name) {
  try {
    return JSON.parse(readFileSync(path.join(cache, 'node_modules', name, 'package.json'), 'utf8')).version
  } catch {
    return null
  }
}

function step(what, cmd, args, opts = {}) {
  console.log(`== ${what}: ${[cmd, ...args].join(' ')}`)
  const r = spawnSync(cmd, args, {stdio: 'inherit', ...opts})
  if (r.status !== 0) {
    console.error(`test:agents: ${what} failed (exit ${r.status ?? r.signal})`)
    process.exit(r.status || 1)
  }
}

const missing = Object.entries(PINS).filter(([name, v]) => installedVersion(name) !== v)
if (missing.length === 0) {
  console.log(`== real agent CLIs already in ${cache}: ${Object.entries(PINS).map(([n, v]) => `${n}@${v}`).join(', ')}`)
} else {
  mkdirSync(cache, {recursive: true})
  step(`installing the real agent CLIs into ${cache}`, npm, ['install', '--prefix', cache, '--no-audit', '--no-fund', '--save-exact', ...Object.entries(PINS).map(([n, v]) => `${n}@${v}`)])
}
const bin = path.join(cache, 'node_modules', '.bin')
for (const b of ['claude', 'codex']) {
  if (!existsSync(path.join(bin, b))) {
    console.error(`test:agents: ${b} missing from ${bin} after install`)
    process.exit(1)
  }
}

if (process.env.HELIX_AGENTS_NO_BUILD !== '1') step('building helix', npm, ['run', 'build'], {cwd: repo})

const vitest = path.join(repo, 'node_modules', 'vitest', 'vitest.mjs')
const r = spawnSync(process.execPath, [vitest, 'run', '--config', 'test/real-agents/vitest.config.ts', ...process.argv.slice(2)], {
  cwd: repo,
  stdio: 'inherit',
  env: {...process.env, HELIX_AGENTS_BIN: bin},
})
process.exit(r.status ?? 1)
