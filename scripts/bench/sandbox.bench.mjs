// The sandbox's cost (SPEC 21). Per dispatch: the same trivial agent
// (`/bin/sh -c true`) started plain and under helix's bwrap argv (the real one,
// from dist/proc/sandbox.js, with a project root, home and PATH to bind back),
// alternately, median of the difference. Goal: under 50 ms. Per attempt: the
// private clone (`git clone --shared`) and the confined fetch of its branch back,
// in a project of BENCH_SANDBOX_FILES files (default 2000).
import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {median, record, repoRoot} from './lib.mjs'

const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 21)
const FILES = Number(process.env.BENCH_SANDBOX_FILES ?? 2000)
const GOAL_MS = 50
if (spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status !== 0) {
  console.log('bwrap is not usable here: skipped')
  process.exit(0)
}
const {sandboxArgv, sandboxEnv, shellQuote, DEFAULT_SANDBOX} = await import(pathToFileURL(path.join(repoRoot, 'dist', 'proc', 'sandbox.js')).href)
const gitEnv = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
const git = (cwd, ...args) => {
  const r = spawnSync('git', args, {cwd, env: gitEnv, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}
const time = (fn) => {
  const t0 = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const base = mkdtempSync(path.join(tmpdir(), 'helix-bench-sandbox-'))
try {
  const root = path.join(base, 'repo')
  const home = path.join(base, 'home')
  mkdirSync(path.join(home, '.claude'), {recursive: true})
  mkdirSync(path.join(root, 'src'), {recursive: true})
  for (let i = 0; i < FILES; i++) writeFileSync(path.join(root, 'src', `f${i}.ts`), `export const v${i} = ${i}\n`)
  git(root, 'init', '-q', '-b', 'main')
  git(root, 'add', '-A')
  git(root, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', 'init')
  const clone = path.join(root, '.helix', 'sandbox', 'b-1')
  mkdirSync(path.dirname(clone), {recursive: true})
  const env = {PATH: process.env.PATH, HOME: home}

  // per dispatch
  const plain = []
  const boxed = []
  const agent = ['/bin/sh', '-c', 'true']
  for (let i = 0; i < RUNS; i++) {
    plain.push(time(() => spawnSync(agent[0], agent.slice(1), {env})))
    boxed.push(
      time(() => {
        const argv = sandboxArgv(DEFAULT_SANDBOX, agent, {cwd: root, rw: [path.join(root, '.helix')], ro: [root, repoRoot], env})
        const r = spawnSync(argv[0], argv.slice(1), {env: sandboxEnv(DEFAULT_SANDBOX, env)})
        if (r.status !== 0) throw new Error(`bwrap exited ${r.status}: ${r.stderr}`)
      }),
    )
  }
  const perDispatch = median(boxed) - median(plain)

  // per attempt: clone, then the confined fetch of one commit back
  const cloneMs = []
  const fetchMs = []
  for (let i = 0; i < 5; i++) {
    rmSync(clone, {recursive: true, force: true})
    cloneMs.push(time(() => git(root, 'clone', '-q', '--shared', '--no-tags', '--single-branch', '-b', 'main', '--', root, clone)))
    writeFileSync(path.join(clone, `new${i}.txt`), 'x\n')
    git(clone, 'add', '-A')
    git(clone, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', 'w')
    const up = sandboxArgv(DEFAULT_SANDBOX, ['git', 'upload-pack'], {cwd: clone, rw: [clone], ro: [root], env}).map(shellQuote).join(' ')
    fetchMs.push(time(() => git(root, '-c', 'protocol.file.allow=always', '-c', 'transfer.fsckObjects=true', 'fetch', '-q', '--no-tags', `--upload-pack=${up}`, '--', clone, 'refs/heads/main')))
  }
  const res = {perDispatchMs: perDispatch, plainMs: median(plain), boxedMs: median(boxed), cloneMs: median(cloneMs), fetchMs: median(fetchMs), files: FILES}
  console.log(`sandbox per dispatch: ${perDispatch.toFixed(1)} ms (bwrap ${res.boxedMs.toFixed(1)} vs plain ${res.plainMs.toFixed(1)} ms, median of ${RUNS}); goal < ${GOAL_MS} ms: ${perDispatch < GOAL_MS ? 'met' : 'NOT met'}`)
  console.log(`sandbox per attempt (${FILES} files): clone ${res.cloneMs.toFixed(0)} ms, confined fetch back ${res.fetchMs.toFixed(0)} ms`)
  record('sandbox', res)
} finally {
  rmSync(base, {recursive: true, force: true})
}
