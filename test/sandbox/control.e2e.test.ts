// SPEC 21.1–21.2 end to end: the stall guard and `helix stop` end every process of a
// sandboxed agent (its own PID namespace, a new session) within the usual times (14.5).
// A sandbox that cannot start is refused before anything is claimed: refusal.test.ts.
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli, startCli} from '../support/cli.js'
import {testEnv} from '../support/env.js'
import {waitFor} from '../support/wait.js'
import {gitSeq} from '../support/git.js'

const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0

/** a project whose agent starts a detached grandchild and then hangs, silent; `marker` names both in ps */
function project(marker: string) {
  const base = makeTempDir('helix-sbctl-')
  const root = path.join(base, 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), JSON.stringify({id: 'sc-1', title: 'hang', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'}) + '\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  const agent = path.join(base, 'agent')
  // setsid: the grandchild leaves the agent's group and session; only the namespace holds it
  // it hangs while <base>/hang exists (the test removes it once it has seen the processes), so a retry ends at once
  const hang = path.join(base, 'hang')
  writeFileSync(hang, '')
  writeFileSync(agent, `#!/bin/sh\n[ "$HELIX_ACTION" = check ] && { echo "NEXT_ACTION: STOP"; exit 0; }\n[ -e '${hang}' ] || exit 1\nsetsid sleep ${marker} &\nexec sleep ${marker}\n`)
  chmodSync(agent, 0o755)
  const env = testEnv({HOME: path.join(base), HELIX_AGENT: agent, HELIX_BACKOFF_SLEEP: '0'})
  return {root, env, hang}
}

/** pids of live processes whose command line carries `marker` */
function withMarker(marker: string): number[] {
  const out: number[] = []
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8')
      const state = readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /, '')[0]
      if (cmd.split('\0').includes(marker) && state !== 'Z') out.push(Number(p))
    } catch {
      /* gone */
    }
  }
  return out
}

describe.skipIf(!hasBwrap)('helix run --sandbox: the whole tree ends', () => {
  it('the stall guard ends the sandboxed agent and its setsid grandchild', async () => {
    const marker = String(900000 + Math.floor(Math.random() * 99999))
    const p = project(marker)
    const run = startCli(['run', '--sandbox', '--stall-timeout', '2', '--max-cycles', '1', '--no-auto-review', '--no-auto-align'], {cwd: p.root, env: p.env})
    await waitFor(() => withMarker(marker).length >= 2, {timeoutMs: 60_000, what: 'the agent and its grandchild'})
    rmSync(p.hang)
    // stall 2 s, then SIGTERM and the 0.5 s test grace; the deadline is generous for a loaded machine
    await waitFor(() => withMarker(marker).length === 0, {timeoutMs: 30_000, what: 'every sandboxed process gone after the stall'})
    const r = await run.done
    expect(r.stdout + r.stderr).toMatch(/agent stalled \(no output for 2s; killed\)/)
  }, 120_000)

  it('helix stop ends the sandboxed agent and its setsid grandchild', async () => {
    const marker = String(800000 + Math.floor(Math.random() * 99999))
    const p = project(marker)
    const run = startCli(['run', '--sandbox', '--no-auto-review', '--no-auto-align'], {cwd: p.root, env: p.env})
    await waitFor(() => withMarker(marker).length >= 2, {timeoutMs: 60_000, what: 'the agent and its grandchild'})
    const stop = runCli(['stop'], {cwd: p.root, env: p.env})
    expect(stop.code, stop.stderr).toBe(0)
    await waitFor(() => withMarker(marker).length === 0, {timeoutMs: 30_000, what: 'every sandboxed process gone after helix stop'})
    const r = await run.done
    expect(r.code).not.toBeNull()
  }, 120_000)
})
