import {existsSync, readFileSync, readdirSync, utimesSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {stopRun, forwardedRunArgs} from '../../src/operator/control.js'
import {BIN, helix, killQuietly, project, REPO, sleeper, waitFor} from './helpers.js'
import {pidAlive} from '../../src/state/pidfile.js'
import {makeTempDir} from '../support/tmp.js'

const kids: number[] = []
afterEach(() => {
  while (kids.length) killQuietly(kids.pop())
})

const pidFile = (root: string) => path.join(root, '.ddx', 'helix.pid')
const manifest = JSON.parse(readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8'))
const hasRun = Boolean(manifest.commands?.run)

describe('helix stop', () => {
  it('no pid file: exit 1, one line', () => {
    const root = project()
    const r = helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('helix: no active run (no PID file)\n')
  })

  it('dead pid: file removed, exit 1', () => {
    const root = project()
    const s = spawnSync('true')
    expect(s.status).toBe(0)
    writeFileSync(pidFile(root), `${s.pid} 2026-01-01T00:00:00.000Z\n`)
    const r = helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} was not running)\n`)
    expect(existsSync(pidFile(root))).toBe(false)
  })

  it('live run: SIGTERM ends it, pid file cleared, exit 0', async () => {
    const root = project()
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(pidFile(root), `${s.pid} ${new Date().toISOString()}\n`)
    const r = helix(root, ['stop'])
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe(`helix: stopped (pid=${s.pid})\n`)
    expect(r.code).toBe(0)
    expect(pidAlive(s.pid!)).toBe(false)
    expect(existsSync(pidFile(root))).toBe(false)
  })

  it('a pid file whose pid now belongs to a younger process (reboot, reuse) is stale: nothing is signalled', () => {
    const root = project()
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(pidFile(root), `${s.pid} 2026-01-01T00:00:00.000Z\n`)
    const st = helix(root, ['status', '--json'])
    expect(JSON.parse(st.stdout).active_run).toBeNull()
    expect(st.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} was not running)\n`)
    writeFileSync(pidFile(root), `${s.pid} 2026-01-01T00:00:00.000Z\n`)
    const r = helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} was not running)\n`)
    expect(pidAlive(s.pid!)).toBe(true)
    expect(existsSync(pidFile(root))).toBe(false)
  })

  it('escalates to SIGKILL after the grace period (fake process, injected sleep)', async () => {
    const root = project()
    writeFileSync(pidFile(root), `4242 2026-01-01T00:00:00.000Z\n`)
    const sent: string[] = []
    const slept: number[] = []
    let alive = true
    const res = await stopRun({
      paths: {pidFile: pidFile(root)},
      graceMs: 15_000,
      pollMs: 1000,
      sleep: async (ms) => {
        slept.push(ms)
      },
      alive: () => alive,
      kill: (_pid, sig) => {
        sent.push(sig)
        if (sig === 'SIGKILL') alive = false
      },
    })
    expect(res).toEqual({pid: 4242, killed: true, released: []})
    expect(sent).toEqual(['SIGTERM', 'SIGKILL'])
    expect(slept.reduce((a, b) => a + b, 0)).toBe(15_000)
    expect(existsSync(pidFile(root))).toBe(false)
  })

  it('after SIGKILL, unclaims the beads the killed run held (only its own)', async () => {
    const {hostname} = await import('node:os')
    const {projectPaths} = await import('../../src/util/root.js')
    const claim = (id: string, pid: number | string, machine = hostname()) => ({id, title: id, status: 'in_progress', owner: 'helix', 'claimed-pid': pid, 'claimed-at': new Date().toISOString(), 'claimed-machine': machine, 'claim-token': 'abc'})
    const root = project({beads: [claim('hx-mine', 4242), claim('hx-str', '4242'), claim('hx-other', 5555), claim('hx-remote', 4242, 'elsewhere')]})
    writeFileSync(pidFile(root), `4242 2026-01-01T00:00:00.000Z\n`)
    let alive = true
    const res = await stopRun({
      paths: projectPaths(root, {}),
      graceMs: 100,
      pollMs: 50,
      sleep: async () => {},
      alive: () => alive,
      kill: (_pid, sig) => {
        if (sig === 'SIGKILL') alive = false
      },
    })
    expect(res.killed).toBe(true)
    expect(res.released).toEqual(['hx-mine', 'hx-str'])
    const beads = Object.fromEntries(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).map((b) => [b.id, b]))
    expect(beads['hx-mine'].status).toBe('open')
    expect(beads['hx-mine']['claim-token']).toBeUndefined()
    expect(beads['hx-mine'].owner).toBeUndefined()
    expect(beads['hx-other'].status).toBe('in_progress')
    expect(beads['hx-remote'].status).toBe('in_progress')
  })

  it('does not remove a pid file that a new run took over meanwhile', async () => {
    const root = project()
    writeFileSync(pidFile(root), `4242 2026-01-01T00:00:00.000Z\n`)
    let alive = true
    await stopRun({
      paths: {pidFile: pidFile(root)},
      pollMs: 10,
      sleep: async () => {},
      alive: (pid) => (pid === 4242 ? alive : true),
      kill: () => {
        alive = false
        writeFileSync(pidFile(root), `5555 2026-01-01T00:00:01.000Z\n`)
      },
    })
    expect(readFileSync(pidFile(root), 'utf8')).toContain('5555')
  })
})

describe('helix start', () => {
  it('forwards every run flag, adding --summary once', () => {
    expect(forwardedRunArgs(['--max-cycles', '3', '-s', '--claude', '--summary'])).toEqual(['--max-cycles', '3', '--claude'])
  })

  it('refuses while a run is active: exit 2, nothing written', () => {
    const root = project()
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(pidFile(root), `${s.pid} ${new Date().toISOString()}\n`)
    const r = helix(root, ['start', '--max-cycles', '1'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^helix start: already running \\(pid=${s.pid}, started=\\d{4}-.*Z\\)\\n$`))
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
  })

  it.runIf(hasRun)('the run survives its launching shell; stop ends it and clears the pid file', async () => {
    const root = project({beads: [{id: 'hx-aaaa0001', title: 'Hang here', status: 'open', acceptance: 'done'}]})
    spawnSync('git', ['init', '-q'], {cwd: root})
    const binDir = path.join(root, 'stubbin')
    const stubDir = makeTempDir('helix-ops-stub-')
    const {installStubs} = await import(path.join(REPO, 'fixtures', 'agents', 'install-stubs.mjs'))
    installStubs(binDir)
    writeFileSync(path.join(stubDir, 'script.json'), JSON.stringify({implementation: {default: ['hang']}}))
    const envPrefix = `PATH='${binDir}':"$PATH" HELIX_STUB_DIR='${stubDir}' NODE_ENV=production`
    // launch from a shell that exits right away (its stdout is a pipe we close)
    const sh = spawnSync('bash', ['-c', `cd '${root}' && ${envPrefix} '${process.execPath}' '${BIN}' start --codex --max-cycles 1; exit`], {encoding: 'utf8', timeout: 30_000})
    expect(sh.stderr).toBe('')
    const m = /^helix: started \(pid=(\d+), log=(.+)\)\n$/.exec(sh.stdout)
    expect(m).not.toBeNull()
    const pid = Number(m![1])
    kids.push(pid)
    expect(m![2].startsWith(path.join(root, '.helix-logs'))).toBe(true)
    expect(readFileSync(pidFile(root), 'utf8').split(' ')[0]).toBe(String(pid))
    // the shell is gone; the run lives on and reaches the agent
    await waitFor(() => existsSync(path.join(stubDir, 'calls.jsonl')), 20_000)
    expect(pidAlive(pid)).toBe(true)
    const st = JSON.parse(helix(root, ['status', '--json'], {PATH: `${binDir}:${process.env.PATH}`}).stdout)
    expect(st.active_run.pid).toBe(pid)
    // status during a real run: its bead, cycle and session log
    expect(st.running_bead).toMatchObject({id: 'hx-aaaa0001', title: 'Hang here'})
    expect(st.current_cycle).toBe(1)
    expect(st.active_run.log).toMatch(/\/\.helix-logs\/helix-\d{8}-\d{6}\.log$/)
    expect(existsSync(st.active_run.log)).toBe(true)
    const text = helix(root, ['status']).stdout
    expect(text).toMatch(/^  Cycle: +1 +Bead: hx-aaaa0001 \(claimed \d+s ago\) Hang here$/m)
    expect(text).toMatch(/^  hx-aaaa0001 +Hang here \(by helix, pid \d+, \d+s ago\)$/m)
    // a second start is refused
    const again = helix(root, ['start'])
    expect(again.code).toBe(2)

    const stop = helix(root, ['stop'])
    expect(stop.stdout).toBe(`helix: stopped (pid=${pid})\n`)
    expect(stop.code).toBe(0)
    expect(pidAlive(pid)).toBe(false)
    expect(existsSync(pidFile(root))).toBe(false)
    expect(readdirSync(path.join(root, '.helix-logs')).some((n) => n.startsWith('start-'))).toBe(true)
    // the run handled SIGTERM itself: bead unclaimed, run-state says interrupted
    const bead = JSON.parse(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').trim())
    expect(bead.status).toBe('open')
    expect(JSON.parse(readFileSync(path.join(root, '.ddx', 'run-state.json'), 'utf8')).stop_reason).toBe('interrupted')
    const st2 = JSON.parse(helix(root, ['status', '--json']).stdout)
    expect(st2.active_run).toBeNull()
    expect(st2.last_stop_reason).toBe('interrupted')
  })
})

describe('a pid file caught mid-creation', () => {
  it('an empty, brand-new pid file is neither removed by status nor by stop', () => {
    const root = project()
    // "brand-new" is younger than 5 s (status/report.ts, status/control.ts): the file is
    // dated a minute ahead before each command, so it is that new however slowly a loaded
    // machine starts the CLI (an overloaded 2-core box took more than 5 s to start status)
    const fresh = () => utimesSync(pidFile(root), new Date(Date.now() + 60_000), new Date(Date.now() + 60_000))
    writeFileSync(pidFile(root), '')
    fresh()
    const st = helix(root, ['status', '--json'])
    expect(st.code).toBe(0)
    expect(st.stderr).toBe('')
    expect(existsSync(pidFile(root))).toBe(true)
    fresh()
    const r = helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('helix: a run is starting; try again in a moment\n')
    expect(existsSync(pidFile(root))).toBe(true)
  })
})

describe('startRun when the run ends before writing its pid file', () => {
  async function withEntry(body: string) {
    const {startRun} = await import('../../src/operator/control.js')
    const root = project()
    const entry = path.join(root, 'fake-run.mjs')
    writeFileSync(entry, body)
    return {root, run: () => startRun({cwd: root, env: {...process.env, NODE_ENV: 'production'}, args: ['--max-cycles', '2'], entry})}
  }

  it('exit 0 (nothing to do): started, and finished', async () => {
    const {root, run} = await withEntry("process.stderr.write('helix: args ' + process.argv.slice(2).join(' ') + '\\n')\n")
    const r = await run()
    expect(r.finished).toBe(true)
    expect(readFileSync(r.log, 'utf8')).toBe('helix: args run --summary --max-cycles 2\n')
    expect(r.log.startsWith(path.join(root, '.helix-logs', 'start-'))).toBe(true)
  })

  it("a failing run: its last helix line and exit code, with the log's path", async () => {
    const {run} = await withEntry("process.stderr.write('noise\\nhelix run: already running (pid=1, started=x)\\n'); process.exit(2)\n")
    await expect(run()).rejects.toMatchObject({exitCode: 2, message: expect.stringMatching(/^helix run: already running \(pid=1, started=x\) \(see .*start-.*\.log\)$/)})
  })
})
