import {spawn} from 'node:child_process'
import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {endProcesses, killGraceMs, liveProcessesOf, pidAlive, runScript, signalExitCode} from '../../src/proc/process.js'
import {startTokenOf} from '../../src/proc/process-probe.js'
import {pidAlive as pidAliveFromPidfile} from '../../src/state/pidfile.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'


function script(body: string): {dir: string; file: string} {
  const dir = makeTempDir('helix-process-')
  const file = path.join(dir, 'check-acceptance-x.sh')
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return {dir, file}
}

describe('signals and grace', () => {
  it('signal → exit code', () => {
    expect(signalExitCode('SIGHUP')).toBe(129)
    expect(signalExitCode('SIGINT')).toBe(130)
    expect(signalExitCode('SIGTERM')).toBe(143)
    expect(signalExitCode('SIGKILL')).toBe(137)
    expect(signalExitCode(null)).toBe(137)
  })
  it('HELIX_KILL_GRACE_MS overrides the 10 s grace; junk is ignored', () => {
    expect(killGraceMs({})).toBe(10_000)
    expect(killGraceMs({HELIX_KILL_GRACE_MS: '250'})).toBe(250)
    expect(killGraceMs({HELIX_KILL_GRACE_MS: '-5'})).toBe(10_000)
    expect(killGraceMs({HELIX_KILL_GRACE_MS: '1e3'})).toBe(10_000)
  })
  it('pidAlive has one home; state/pidfile re-exports it', async () => {
    expect(pidAliveFromPidfile).toBe(pidAlive)
    expect(pidAlive(process.pid)).toBe(true)
    expect(pidAlive(0)).toBe(false)
    const child = spawn('true')
    await new Promise((r) => child.once('exit', r))
    expect(pidAlive(child.pid!)).toBe(false)
  })
  it('endProcesses: SIGTERM, then SIGKILL after the grace for a process that ignores SIGTERM', async () => {
    const child = spawn('sh', ['-c', "trap '' TERM; echo ready; while :; do sleep 0.05; done"], {detached: true, stdio: ['ignore', 'pipe', 'ignore']})
    trackProcess(child.pid!)
    // a SIGTERM that lands before the shell has set its trap kills it at once: wait until it ignores TERM
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()))
    const t0 = Date.now()
    const left = await endProcesses({pgid: child.pid!}, 300)
    expect(left).toEqual([])
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300)
    expect(Date.now() - t0).toBeLessThan(3000)
    expect(pidAlive(child.pid!)).toBe(false)
  })
})

describe('finding what is left of a dispatch (issue 18: one /proc scan)', () => {
  it.runIf(existsSync('/proc/self/stat'))('a tagged process that left the group is found by its dispatch id; with `since` only processes started since then are read', async () => {
    const id = `test-since-${process.pid}-${Date.now()}`
    const child = spawn('sleep', ['30'], {detached: true, stdio: 'ignore', env: {...process.env, HELIX_DISPATCH_ID: id}})
    trackProcess(child.pid!)
    await new Promise<void>((resolve) => child.once('spawn', () => resolve()))
    // sleep has exec'd once its environment carries the id
    let start: string | undefined
    for (let i = 0; i < 200 && !readFileSync(`/proc/${child.pid}/environ`, 'latin1').includes(id); i++) await new Promise((r) => setTimeout(r, 10))
    start = startTokenOf(child.pid!)
    expect(start).toMatch(/^\d+$/)
    expect(liveProcessesOf({dispatchId: id})).toEqual([child.pid])
    expect(liveProcessesOf({dispatchId: id, since: Number(start)})).toEqual([child.pid])
    // a dispatch that began after it started cannot have passed it the id: its environment is not even read
    expect(liveProcessesOf({dispatchId: id, since: Number(start) + 1})).toEqual([])
    expect(await endProcesses({dispatchId: id, since: Number(start)}, 2000)).toEqual([])
    expect(pidAlive(child.pid!)).toBe(false)
  })
})

describe('runScript (hooks and gates on execa)', () => {
  it('exit codes, merged output tail, no stdin', async () => {
    const ok = script('echo out; echo err >&2; read x && echo "stdin: $x"; exit 0')
    const r = await runScript(ok.file, {cwd: ok.dir, timeoutSec: 30})
    expect(r).toMatchObject({code: 0, timedOut: false})
    expect(r.output).toContain('out')
    expect(r.output).toContain('err')
    expect(r.output).not.toContain('stdin:')
    const three = script('exit 3')
    expect((await runScript(three.file, {cwd: three.dir, timeoutSec: 30})).code).toBe(3)
    expect((await runScript(path.join(three.dir, 'missing.sh'), {cwd: three.dir, timeoutSec: 30})).code).toBe(127)
  })

  it('a hanging script is killed with its whole group at the timeout (SIGTERM-ignoring child included)', async () => {
    const s = script(`sh -c "trap '' TERM; echo \\$\\$ > child; while :; do sleep 0.05; done" & wait`)
    const t0 = Date.now()
    const r = await runScript(s.file, {cwd: s.dir, timeoutSec: 1, graceMs: 300})
    expect(r.timedOut).toBe(true)
    expect(r.code).not.toBe(0)
    expect(Date.now() - t0).toBeLessThan(5000)
    const child = Number(readFileSync(path.join(s.dir, 'child'), 'utf8'))
    trackProcess(child)
    expect(pidAlive(child)).toBe(false)
  })

  it('a background child left holding the pipe neither wedges the gate nor survives it', async () => {
    const s = script('sleep 300 & echo $! > bg; echo done; exit 0')
    const t0 = Date.now()
    const r = await runScript(s.file, {cwd: s.dir, timeoutSec: 60, graceMs: 300})
    expect(r.code).toBe(0)
    expect(Date.now() - t0).toBeLessThan(5000)
    const bg = Number(readFileSync(path.join(s.dir, 'bg'), 'utf8'))
    trackProcess(bg)
    expect(pidAlive(bg)).toBe(false)
  })

  it('helix interrupted (abort): the script group is killed', async () => {
    const s = script('echo $$ > me; exec sleep 300')
    const ac = new AbortController()
    const pending = runScript(s.file, {cwd: s.dir, timeoutSec: 60, signal: ac.signal, graceMs: 300})
    const me = path.join(s.dir, 'me')
    await waitFor(() => existsSync(me), {timeoutMs: 10_000, what: 'the script to write its pid'})
    ac.abort()
    const r = await pending
    expect(r.code).toBe(143)
    expect(pidAlive(Number(readFileSync(me, 'utf8')))).toBe(false)
  })
})
