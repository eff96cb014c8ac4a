/**
 * Torture for SPEC 14.5: repeated `kill -9` of a dispatching helix (here: a
 * small node process that dispatches one agent through the built runner and is
 * SIGKILLed mid-dispatch). Every trial, the watchdog must end the agent and its
 * double-forked setsid escapee within 10 s, and no process may keep the tag.
 */
import {spawn} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {taggedProcesses} from '../../src/proc/tagged.js'
import {pidAlive} from '../../src/proc/process.js'
import {makeTempDir} from '../support/tmp.js'
import {trials} from '../support/stress.js'
import {waitFor} from '../support/wait.js'

const REPO = path.resolve(import.meta.dirname, '..', '..')
const TRIALS = Number(process.env.HELIX_STRESS_TRIALS || trials(8, 2))
const base = makeTempDir('helix-escape-stress-')
const leftovers: number[] = []
afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* gone: the expected case */
    }
  }
  rmSync(base, {recursive: true, force: true})
})

const AGENT = `#!/bin/sh
cat >/dev/null
setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$0/escapee.tmp"; mv "$0/escapee.tmp" "$0/escapee"' "$AGENT_DIR"
echo $$ > "$AGENT_DIR/agent.tmp"; mv "$AGENT_DIR/agent.tmp" "$AGENT_DIR/agent"
exec sleep 300
`

// the "helix": dispatches one agent with the built runner, then waits forever
const HOST = `
const {dispatchAgent} = await import(${JSON.stringify(path.join(REPO, 'dist', 'agents', 'runner.js'))})
const {openSessionLog} = await import(${JSON.stringify(path.join(REPO, 'dist', 'output', 'session-log.js'))})
const [root, agent] = process.argv.slice(2)
await dispatchAgent({agent: {kind: 'command', name: agent, path: agent}, action: 'check', prompt: 'x', root, timeoutSec: 600, log: openSessionLog(root + '/logs')})
`

describe('kill -9 of a dispatching helix, repeated', () => {
  it(`${TRIALS} trials: agent and escapee gone within 10 s every time`, async () => {
    expect(existsSync(path.join(REPO, 'dist', 'agents', 'runner.js'))).toBe(true) // npm run build first
    const host = path.join(base, 'host.mjs')
    writeFileSync(host, HOST)
    const agent = path.join(base, 'agent.sh')
    writeFileSync(agent, AGENT)
    chmodSync(agent, 0o755)
    const times: number[] = []
    for (let i = 0; i < TRIALS; i++) {
      const dir = path.join(base, `t${i}`)
      mkdirSync(dir)
      const child = spawn(process.execPath, [host, dir, agent], {stdio: 'ignore', env: {...process.env, NODE_ENV: 'production', AGENT_DIR: dir}})
      const exited = new Promise((r) => child.once('exit', r))
      await waitFor(() => existsSync(path.join(dir, 'agent')) && existsSync(path.join(dir, 'escapee')), 20_000)
      const pids = ['agent', 'escapee'].map((f) => Number(readFileSync(path.join(dir, f), 'utf8')))
      leftovers.push(...pids)
      child.kill('SIGKILL')
      await exited
      times.push(await waitFor(() => pids.every((p) => !pidAlive(p)) && taggedProcesses((t) => t.runPid === child.pid).length === 0, 10_000))
    }
    expect(times).toHaveLength(TRIALS)
    expect(Math.max(...times)).toBeLessThan(10_000)
  }, 40_000 + TRIALS * 15_000)
})
