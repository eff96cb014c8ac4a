// issue 20 item 7: .helix/config.json remembers the agent and the run's settings. Through
// the built CLI: the config files that could hang or swamp a reader (a FIFO, /dev/zero),
// where only a process with a deadline can fail instead of hanging the test's worker. The
// runs whose agent calls helix run in-process with NODE_ENV=production (the agent's `helix
// tracker close` takes dist/'s fast path, so this file stays e2e). The rest (what is refused
// and printed) runs in-process: config.test.ts.
import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {project, REPO} from './helpers.js'
import {runCli} from '../support/cli.js'
import {helixInProcess} from '../support/in-process.js'

const MINIMAL = path.join(REPO, 'fixtures', 'agents', 'minimal-agent.sh')

function withAgent(beads = [{id: 'hx-a', title: 'a', priority: 0}]): string {
  const root = project({beads})
  copyFileSync(MINIMAL, path.join(root, 'agent.sh'))
  mkdirSync(path.join(root, '.helix'))
  return root
}

const config = (root: string) => path.join(root, '.helix', 'config.json')
const statusOf = (root: string, id: string) =>
  readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as {id: string; status: string}).find((b) => b.id === id)?.status

describe('.helix/config.json', () => {
  it('--save-config writes the flags typed (agent relative to the root); a later run in a subdirectory with only the file runs the agent and closes the bead', async () => {
    const root = withAgent([{id: 'hx-a', title: 'a', priority: 0}, {id: 'hx-b', title: 'b', priority: 1}])
    const r = await helixInProcess(root, ['run', '--agent', './agent.sh', '--timeout', '120', '--max-cycles', '1', '--no-auto-review', '--summary', '--save-config'], {}, 'production')
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('helix: saved agent, timeout, max-cycles, auto-review to .helix/config.json')
    expect(JSON.parse(readFileSync(config(root), 'utf8'))).toEqual({agent: './agent.sh', timeout: 120, 'max-cycles': 1, 'auto-review': false})
    expect(statusOf(root, 'hx-a')).toBe('closed')
    // a whole run with only the config file (agent, one cycle, no review), from a subdirectory
    const sub = path.join(root, 'src')
    mkdirSync(sub)
    const again = await helixInProcess(sub, ['run', '--summary'], {}, 'production')
    expect(again.code).toBe(0)
    expect(statusOf(root, 'hx-b')).toBe('closed')
  }, 60_000)

  // issue 30: /dev/zero behind a symlink grew `helix status` to 1.1 GB, a FIFO hung it.
  // Each is now one line naming the file, exit 1, at once (the fast path and oclif).
  // (A directory and a 200 MB file: config.test.ts, in-process.)
  it.each([
    ['a symlink to /dev/zero', (f: string) => symlinkSync('/dev/zero', f)],
    ['a FIFO', (f: string) => execFileSync('mkfifo', [f])],
  ])('config that is %s: one line, exit 1, nothing changed', (_what, make) => {
    const root = withAgent()
    make(config(root))
    const before = readdirSync(root).sort()
    for (const cmd of [['status'], ['status', '--json'], ['run', '--dry-run'], ['run', '--workers', '2', '--save-config', '--dry-run']]) {
      const r = runCli(cmd, {cwd: root, timeoutMs: 20_000})
      expect(r.signal, cmd.join(' ')).toBeNull()
      expect(r.code, cmd.join(' ')).toBe(1)
      expect(r.stderr.startsWith(`helix: ${config(root)}: `), r.stderr).toBe(true)
      expect(r.stderr).toContain('not a regular file')
      expect(r.stderr.split('\n')).toHaveLength(2)
    }
    expect(readdirSync(root).sort()).toEqual(before)
    expect(readdirSync(path.join(root, '.helix'))).toEqual(['config.json'])
    expect(existsSync(path.join(root, '.ddx', 'run-state.json'))).toBe(false)
  }, 60_000)
})
