import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {BIN as CLI, runCli} from '../support/cli.js'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'

// `npm run test:agents`: `helix run` end to end with the REAL claude and codex CLIs
// (pinned versions, installed by scripts/test-agents.mjs into HELIX_AGENTS_BIN's
// package), no credentials (HOME is an empty temp dir) and no network (codex runs
// under `unshare -n` when the machine allows it). SPEC 14: an agent that is down
// never parks the queue — exit 4, every bead open, no `blocked`, no note, no agent
// process left.

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')
const AGENTS_BIN = process.env.HELIX_AGENTS_BIN ?? path.join(os.homedir(), '.cache', 'helix', 'agents', 'node_modules', '.bin')
const IS_ROOT = process.getuid?.() === 0
const CAN_UNSHARE = spawnSync('unshare', ['-n', 'true']).status === 0
const HAS_BWRAP = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0

interface Proj {
  base: string
  root: string
  home: string
  tmp: string
  tracker: string
}
const made: Proj[] = []

afterEach(() => {
  for (const p of made.splice(0)) {
    for (const pid of ours(p)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        /* gone */
      }
    }
    rmSync(p.base, {recursive: true, force: true})
  }
})

beforeAll(() => {
  for (const bin of ['claude', 'codex']) if (!existsSync(path.join(AGENTS_BIN, bin))) throw new Error(`${bin} not in ${AGENTS_BIN}: run npm run test:agents (it installs them)`)
  if (!existsSync(path.join(REPO, 'dist', 'commands', 'run.js'))) throw new Error('dist/ is missing: npm run build')
})

/** a git repo with two open beads and an empty HOME, all under one temp dir */
function project(): Proj {
  const base = makeTempDir('helix-real-')
  const root = path.join(base, 'repo')
  const home = path.join(base, 'home')
  // the real CLIs keep scratch files in TMPDIR (claude: claude-<uid>/): keep them inside this project's dir
  const tmp = path.join(base, 'tmp')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  mkdirSync(home)
  mkdirSync(tmp)
  spawnSync('git', ['init', '-q'], {cwd: root})
  spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init'], {cwd: root})
  const tracker = path.join(root, '.ddx', 'beads.jsonl')
  writeFileSync(
    tracker,
    ['hx-real0001', 'hx-real0002'].map((id, i) => JSON.stringify({id, title: `real agent bead ${i + 1}`, status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:0${i}Z`}) + '\n').join(''),
  )
  const p = {base, root, home, tmp, tracker}
  made.push(p)
  return p
}

/** pids of live processes whose environment carries this project's HOME (the agents it started) */
function ours(p: Proj): number[] {
  const needle = Buffer.from(`HOME=${p.home}\0`)
  const out: number[] = []
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3))) continue
      if (readFileSync(`/proc/${e}/environ`).includes(needle)) out.push(Number(e))
    } catch {
      /* gone or not ours */
    }
  }
  return out
}

// The default backoff is kept on purpose: with HELIX_BACKOFF_SLEEP=0 a stalled bead is
// retried at once and blocked after 4 stalls before a second bead ever stalls.
function run(p: Proj, args: string[], env: Record<string, string>, offline = false): Promise<{code: number | null; stdout: string; stderr: string; ms: number}> {
  const base: NodeJS.ProcessEnv = {...process.env}
  for (const k of Object.keys(base)) if (k.startsWith('HELIX_') || k === 'IS_SANDBOX' || k.startsWith('ANTHROPIC_') || k.startsWith('OPENAI_') || k === 'CODEX_HOME') delete base[k]
  const fullEnv = {...base, HOME: p.home, TMPDIR: p.tmp, PATH: `${AGENTS_BIN}${path.delimiter}${process.env.PATH}`, NODE_ENV: 'production', HELIX_KILL_GRACE_MS: '500', HELIX_AUTO_ALIGN: '0', ...env}
  const argv = [CLI, 'run', '--timeout', '120', ...args]
  const t0 = Date.now()
  const child = offline && CAN_UNSHARE ? spawn('unshare', ['-n', process.execPath, ...argv], {cwd: p.root, env: fullEnv}) : spawn(process.execPath, argv, {cwd: p.root, env: fullEnv})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) => child.on('close', (code) => resolve({code, stdout, stderr, ms: Date.now() - t0})))
}

async function expectQueueUntouched(p: Proj): Promise<void> {
  const beads = readFileSync(p.tracker, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  expect(beads).toHaveLength(2)
  for (const b of beads) {
    expect(b.status, `${b.id} status`).toBe('open')
    expect(b.labels ?? [], `${b.id} labels`).not.toContain('blocked')
    expect(b.notes ?? '', `${b.id} notes`).toBe('')
    expect(b.owner ?? '', `${b.id} owner (claim released)`).toBe('')
  }
  await waitFor(() => ours(p).length === 0, {timeoutMs: 5000, intervalMs: 100, what: 'no agent process left behind'})
}

describe('helix run with the real claude and codex CLIs', () => {
  it.skipIf(!IS_ROOT)('real claude as root without IS_SANDBOX: exit 4 with the root hint', async () => {
    const p = project()
    const r = await run(p, ['--claude'], {})
    expect(r.stderr).toContain('helix: agent claude unavailable: --dangerously-skip-permissions cannot be used with root/sudo privileges')
    expect(r.stderr).toContain('run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust')
    expect(r.code).toBe(4)
    await expectQueueUntouched(p)
  })

  it('real claude with IS_SANDBOX=1 and an empty HOME: exit 4, Not logged in', async () => {
    const p = project()
    const r = await run(p, ['--claude'], {IS_SANDBOX: '1'})
    expect(r.stderr).toMatch(/helix: agent claude unavailable: .*Not logged in/)
    expect(r.code).toBe(4)
    await expectQueueUntouched(p)
  })

  it('helix doctor probes the real CLIs: versions, and claude refusing as root with the fix', () => {
    const p = project()
    // runCli's environment drops the runner's HELIX_* (HELIX_REVIEW_AGENT among them); IS_SANDBOX only where given
    const env: NodeJS.ProcessEnv = {HOME: p.home, TMPDIR: p.tmp, PATH: `${AGENTS_BIN}${path.delimiter}${process.env.PATH}`, HELIX_AGENT: 'claude', IS_SANDBOX: undefined}
    const sandboxed = runCli(['doctor'], {cwd: p.root, env: {...env, IS_SANDBOX: '1'}})
    expect(sandboxed.stdout).toMatch(/^ok {4}implementation agent claude version: 2\.1\.197 \(Claude Code\) \(/m)
    expect(sandboxed.stdout).toMatch(/^ok {4}agent codex version: codex-cli 0\.169\.0 \(/m)
    if (IS_ROOT) {
      const asRoot = runCli(['doctor'], {cwd: p.root, env})
      expect(asRoot.code).toBe(1)
      expect(asRoot.stdout).toContain('FAIL  implementation agent claude refusing: 2.1.197 (Claude Code) would refuse to run')
      expect(asRoot.stdout).toContain('fix: run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust')
    }
  })

  it('real codex offline with --stall-timeout 5: stalls on two beads, then exit 4', async () => {
    const p = project()
    const r = await run(p, ['--codex', '--stall-timeout', '5'], {}, true)
    expect(r.stderr.match(/codex stalled \(no output for 5s; killed\)/g)?.length ?? 0).toBeGreaterThanOrEqual(2)
    expect(r.code).toBe(4)
    expect(r.ms).toBeLessThan(90_000)
    await expectQueueUntouched(p)
  })

  // SPEC 21: the real CLIs start inside the bubblewrap sandbox and fail exactly as outside
  it.skipIf(!HAS_BWRAP)('real claude in --sandbox (IS_SANDBOX kept through sandboxEnv): exit 4, Not logged in', async () => {
    const p = project()
    mkdirSync(path.join(p.root, '.helix'), {recursive: true})
    writeFileSync(path.join(p.root, '.helix', 'config.json'), JSON.stringify({sandboxEnv: ['IS_SANDBOX']}))
    const r = await run(p, ['--claude', '--sandbox'], {IS_SANDBOX: '1'})
    expect(r.stderr).toMatch(/helix: agent claude unavailable: .*Not logged in/)
    expect(r.code).toBe(4)
    await expectQueueUntouched(p)
  })

  it.skipIf(!HAS_BWRAP || !IS_ROOT)('real claude as root in --sandbox without IS_SANDBOX: exit 4 with the root hint', async () => {
    const p = project()
    const r = await run(p, ['--claude', '--sandbox'], {})
    expect(r.stderr).toContain('helix: agent claude unavailable: --dangerously-skip-permissions cannot be used with root/sudo privileges')
    expect(r.code).toBe(4)
    await expectQueueUntouched(p)
  })

  it.skipIf(!HAS_BWRAP)('real codex in --sandbox --sandbox-network none with --stall-timeout 5: stalls on two beads, then exit 4', async () => {
    const p = project()
    const r = await run(p, ['--codex', '--sandbox', '--sandbox-network', 'none', '--stall-timeout', '5'], {})
    expect(r.stderr.match(/stalled \(no output for 5s/g)?.length ?? 0).toBeGreaterThanOrEqual(2)
    expect(r.code).toBe(4)
    expect(r.ms).toBeLessThan(90_000)
    await expectQueueUntouched(p)
  })
})
