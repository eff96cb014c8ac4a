/**
 * Every agent process ends with its dispatch (SPEC 14.5), against the built CLI:
 * an agent that double-forks a `setsid` sleeper (re-parented, own session: no
 * process tree or group reaches it, only its HELIX_DISPATCH_ID) is gone after
 * SIGTERM of `helix run`, and after `kill -9` of `helix run` (the watchdog).
 *
 * The last test also needs the immediate-stale claim rule of SPEC 13.3 (tracker
 * branch): it is skipped, saying so, until that rule is in the tree.
 */
import {spawn} from 'node:child_process'
import {existsSync, readFileSync, realpathSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {startTokenOf} from '../../src/proc/process-probe.js'
import {taggedProcesses} from '../../src/proc/tagged.js'
import {pidAlive} from '../../src/proc/process.js'
import {beads, helix, helixAsync, project, writeExecutable, type Project} from '../loop/e2e-helpers.js'
import {trackProcess} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'


// First implementation call: double-fork a setsid sleeper, then hang. Later
// calls close the bead through the helix on PATH. Other actions say STOP.
const AGENT = `#!/bin/sh
cat >/dev/null
d="$AGENT_DIR"
if [ "$HELIX_ACTION" != implementation ]; then echo "NEXT_ACTION: STOP"; exit 0; fi
echo "$HELIX_BEAD_ID $HELIX_DISPATCH_ID" >> "$d/impl-calls"
if [ ! -e "$d/first" ]; then
  : > "$d/first"
  setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$0/escapee.tmp"; mv "$0/escapee.tmp" "$0/escapee"' "$d"
  echo $$ > "$d/agent.tmp"; mv "$d/agent.tmp" "$d/agent"
  echo working
  exec sleep 300
fi
helix tracker close "$HELIX_BEAD_ID"
echo closed
`

function setup(id: string): {p: Project; agent: string; extra: Record<string, string>} {
  const p = project([{id}])
  const agent = path.join(p.binDir, 'escaping-agent')
  writeExecutable(agent, AGENT)
  return {p, agent, extra: {AGENT_DIR: p.stubDir, HELIX_KILL_GRACE_MS: '500'}}
}

const ofRun = (runPid: number) => taggedProcesses((t) => t.runPid === runPid)

/** waits until the agent and its escapee run; returns their pids */
async function started(p: Project): Promise<{agent: number; escapee: number}> {
  const file = (n: string) => path.join(p.stubDir, n)
  await waitFor(() => existsSync(file('agent')) && existsSync(file('escapee')), 30_000)
  const agent = Number(readFileSync(file('agent'), 'utf8'))
  const escapee = Number(readFileSync(file('escapee'), 'utf8'))
  trackProcess(agent)
  trackProcess(escapee)
  return {agent, escapee}
}

describe('no agent process outlives its dispatch (built CLI)', () => {
  it('SIGTERM of helix run: exit 143 and no process carrying its dispatch id is left, escapee included', async () => {
    const {p, agent, extra} = setup('hx-term')
    const {child, done} = helixAsync(p, ['run', '--no-auto-review', '--agent', agent], extra)
    const procs = await started(p)
    // both carry the run's tag; the agent may still be inside its `exec sleep` when its pid file
    // appears (its environment is unreadable for that moment), so the scan is repeated until it reads both
    await waitFor(() => {
      const pids = ofRun(child.pid!).map((t) => t.pid)
      return pids.includes(procs.agent) && pids.includes(procs.escapee)
    }, {timeoutMs: 30_000, what: 'the agent and its escapee to carry the dispatch id'})
    child.kill('SIGTERM')
    const r = await done
    expect(r.code).toBe(143)
    expect(ofRun(child.pid!)).toEqual([])
    for (const pid of [procs.agent, procs.escapee]) expect(pidAlive(pid)).toBe(false)
    expect(beads(p).get('hx-term')!.status).toBe('open')
  }, 60_000)

  it('kill -9 of helix run mid-cycle: the watchdog ends the agent and the escapee within 10 s', async () => {
    const {p, agent, extra} = setup('hx-k9')
    const {child, done} = helixAsync(p, ['run', '--no-auto-review', '--agent', agent], extra)
    const procs = await started(p)
    expect(ofRun(child.pid!).length).toBeGreaterThanOrEqual(2)
    child.kill('SIGKILL')
    await done
    const took = await waitFor(() => ofRun(child.pid!).length === 0 && !pidAlive(procs.agent) && !pidAlive(procs.escapee), 10_000)
    expect(took).toBeLessThan(10_000)
    // the bead is still claimed by the dead run: nothing but a new run may release it
    expect(beads(p).get('hx-k9')!.status).toBe('in_progress')
  }, 60_000)

  it('helix recover ends what a dead run left carrying its tag (and --dry-run only says so)', async () => {
    const {p, extra} = setup('hx-rec')
    // Any helix run or recover on this host ends a dead run's leftovers (SPEC 14.5), and
    // other test files start such runs in parallel: when one of them got there first,
    // the scenario is set up again (a recover that never sees leftovers fails every round).
    let seen = false
    for (let round = 0; round < 5 && !seen; round++) {
      // a stand-in run, alive while the leftover is created, killed just before recover looks
      const standIn = spawn('sleep', ['300'], {stdio: 'ignore'})
      trackProcess(standIn.pid!)
      const tag = {HELIX_DISPATCH_ID: `feedface.${round + 1}`, HELIX_RUN_PID: String(standIn.pid), HELIX_RUN_START: startTokenOf(standIn.pid!)!, HELIX_PROJECT: realpathSync(p.root)}
      const left = spawn('sh', ['-c', 'exec sleep 300'], {stdio: 'ignore', detached: true, env: {PATH: process.env.PATH, ...tag}})
      left.unref()
      trackProcess(left.pid!)
      await waitFor(() => readFileSync(`/proc/${left.pid}/environ`, 'latin1').includes(`HELIX_DISPATCH_ID=${tag.HELIX_DISPATCH_ID}`), 10_000)
      const gone = new Promise((r) => standIn.once('exit', r))
      standIn.kill('SIGKILL')
      await gone
      const dry = helix(p, ['recover', '--dry-run'], extra)
      expect(dry.code).toBe(0)
      const dryLine = new RegExp(`helix: would kill \\d+ leftover agent process\\(es\\) of dead run\\(s\\) .*${standIn.pid}`)
      if (!dryLine.test(dry.stdout)) {
        expect(pidAlive(left.pid!)).toBe(false) // someone else ended it: retry
        continue
      }
      const r = helix(p, ['recover'], extra)
      expect(r.code).toBe(0)
      expect(pidAlive(left.pid!)).toBe(false)
      if (!new RegExp(`helix: killed \\d+ leftover agent process\\(es\\) of dead run\\(s\\) .*${standIn.pid}`).test(r.stdout)) continue
      seen = true
    }
    expect(seen).toBe(true)
  }, 120_000)

  it('kill -9, then the next helix run reclaims the bead at once and completes it', async () => {
    const {p, agent, extra} = setup('hx-resume')
    const {child, done} = helixAsync(p, ['run', '--no-auto-review', '--agent', agent], extra)
    await started(p)
    child.kill('SIGKILL')
    await done
    const t0 = Date.now()
    const r = helix(p, ['run', '--no-auto-review', '--agent', agent, '--max-cycles', '1'], extra)
    expect(Date.now() - t0).toBeLessThan(30_000)
    expect(r.code).toBe(0)
    expect(r.stdout + r.stderr).toContain('reclaiming orphaned hx-resume')
    expect(beads(p).get('hx-resume')!.status).toBe('closed')
    const calls = readFileSync(path.join(p.stubDir, 'impl-calls'), 'utf8').trim().split('\n')
    expect(calls).toHaveLength(2)
    expect(calls.every((c) => c.startsWith('hx-resume '))).toBe(true)
    // two dispatches, two ids, each `<claim-token>.<n>`
    const [first, second] = calls.map((c) => c.split(' ')[1])
    expect(first).not.toBe(second)
    for (const id of [first, second]) expect(id).toMatch(/^[0-9a-f]{16}\.\d+$/)
  }, 90_000)
})
