// issue 20 item 7: .helix/config.json remembers the agent and the run's settings.
// flags > HELIX_* > config > defaults; a bad file is one line naming the file and key.
// Each command runs in-process (test/support/in-process.ts); the real runs and the config
// files that could hang a reader (a FIFO, /dev/zero) spawn the CLI: config.e2e.test.ts.
import {closeSync, copyFileSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {project, REPO} from './helpers.js'

const MINIMAL = path.join(REPO, 'fixtures', 'agents', 'minimal-agent.sh')
/** PATH with node/git but certainly no codex or claude */
const BARE_PATH = `${path.dirname(process.execPath)}:/usr/bin:/bin`

function withAgent(): string {
  const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}]})
  copyFileSync(MINIMAL, path.join(root, 'agent.sh'))
  mkdirSync(path.join(root, '.helix'))
  return root
}

const config = (root: string) => path.join(root, '.helix', 'config.json')

describe('.helix/config.json', () => {
  it('--save-config with --dry-run writes nothing; the agent in the file is relative to the root, from a subdirectory too', async () => {
    const root = withAgent()
    // --dry-run writes nothing, --save-config included (SPEC 22.2)
    const dry = await helix(root, ['run', '--agent', './agent.sh', '--workers', '2', '--timeout', '120', '--save-config', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stderr).toContain('helix: would save agent, timeout, workers to .helix/config.json (dry run: not written)')
    expect(existsSync(config(root))).toBe(false)
    // (what --save-config writes, and a real run from a subdirectory: config.e2e.test.ts)
    writeFileSync(config(root), JSON.stringify({agent: './agent.sh'}))
    const sub = path.join(root, 'src')
    mkdirSync(sub)
    const again = await helix(sub, ['run', '--dry-run'])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain(`command: ${path.join(root, 'agent.sh')}\n`)
  })

  it('a flag beats HELIX_AGENT, which beats the file', async () => {
    const root = withAgent()
    writeFileSync(config(root), JSON.stringify({agent: './agent.sh'}))
    expect((await helix(root, ['run', '--dry-run'], {HELIX_AGENT: '/bin/true'})).stdout).toContain('command: /bin/true\n')
    expect((await helix(root, ['run', '--dry-run', '--agent', '/bin/echo'], {HELIX_AGENT: '/bin/true'})).stdout).toContain('command: /bin/echo\n')
  })

  it('doctor in a project configured for ./agent.sh does not fail on a missing codex', async () => {
    const root = withAgent()
    writeFileSync(config(root), JSON.stringify({agent: './agent.sh'}))
    const d = await helix(root, ['doctor'], {PATH: BARE_PATH})
    expect(d.stdout).toMatch(/^ok +implementation agent .*agent\.sh/m)
    expect(d.stdout).not.toMatch(/^FAIL.*codex/m)
    // a project whose agent is a command is not asked for codex or claude at all (SPEC 22.2)
    expect(d.stdout).not.toMatch(/codex|claude/)
    expect(d.code).toBe(0)
  }, 30_000)

  it.each([
    ['{"workers": "three"}', `key 'workers' must be a whole number ≥ 0 (got "three")`],
    ['{"agnet": "./agent.sh"}', "unknown key 'agnet'"],
    // issue 29: refused by status too, and blamed on the file, not on HELIX_WORKERS
    ['{"workers": 0}', "key 'workers' must be a whole number from 1 to 32 (got 0)"],
    ['{"land": "rebase"}', `key 'land' must be 'ff', 'none' or 'pr' (got "rebase")`],
    ['{"agent": ', 'not valid JSON'],
    ['[1]', 'must hold one JSON object'],
  ])('invalid %s: one line naming the file and the key, exit 1, nothing run', async (text, msg) => {
    const root = withAgent()
    writeFileSync(config(root), text)
    for (const cmd of [['run', '--dry-run'], ['doctor'], ['status']]) {
      const r = await helix(root, cmd)
      expect(r.code, cmd.join(' ')).toBe(1)
      expect(r.stderr).toMatch(new RegExp(`^helix: ${config(root).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: .*\n$`))
      expect(r.stderr).toContain(msg)
    }
    expect(existsSync(path.join(root, '.ddx', 'run-state.json'))).toBe(false)
  }, 30_000)

  it('a missing agent named by the config file says where it was set', async () => {
    const root = withAgent()
    writeFileSync(config(root), JSON.stringify({agent: './gone.sh'}))
    const r = await helix(root, ['run'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: agent '${path.join(root, 'gone.sh')}' not found or not executable (set by 'agent' in .helix/config.json; edit it or pass --agent)\n`)
    const d = await helix(root, ['doctor'])
    expect(d.stdout).toMatch(/fix: .*'agent' in \.helix\/config\.json/)
    expect(existsSync(path.join(root, '.ddx', 'run-state.json'))).toBe(false)
  })
  // issue 30: a 200 MB file was read whole. Each is now one line naming the file, exit 1.
  // (A FIFO and /dev/zero could hang the reader: config.e2e.test.ts, with a deadline.)
  it.each([
    ['a directory', (f: string) => mkdirSync(f), 'not a regular file'],
    [
      'a 200 MB (sparse) file',
      (f: string) => {
        const fd = openSync(f, 'w')
        ftruncateSync(fd, 200 * 1024 * 1024)
        closeSync(fd)
      },
      'larger than 1048576 bytes',
    ],
  ])('config that is %s: one line, exit 1, nothing changed', async (_what, make, msg) => {
    const root = withAgent()
    make(config(root))
    const before = readdirSync(root).sort()
    for (const cmd of [['status'], ['status', '--json'], ['run', '--dry-run'], ['run', '--workers', '2', '--save-config', '--dry-run']]) {
      const r = await helix(root, cmd)
      expect(r.code, cmd.join(' ')).toBe(1)
      expect(r.stderr.startsWith(`helix: ${config(root)}: `), r.stderr).toBe(true)
      expect(r.stderr).toContain(msg)
      expect(r.stderr.split('\n')).toHaveLength(2)
    }
    expect(readdirSync(root).sort()).toEqual(before)
    expect(readdirSync(path.join(root, '.helix'))).toEqual(['config.json'])
    expect(existsSync(path.join(root, '.ddx', 'run-state.json'))).toBe(false)
    if (msg.startsWith('larger')) expect(statSync(config(root)).size).toBe(200 * 1024 * 1024)
  }, 60_000)

  it("--agent agent.sh (not on PATH) hints './agent.sh'", async () => {
    const root = withAgent()
    const r = await helix(root, ['run', '--agent', 'agent.sh'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("helix: agent 'agent.sh' not found on PATH (did you mean './agent.sh'?)\n")
  })
})
