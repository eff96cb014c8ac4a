// helix stop and helix start: each command in-process (test/support/in-process.ts), stopRun
// and startRun with fakes. A real run started from a shell that exits, then stopped:
// control.e2e.test.ts.
import {existsSync, readFileSync, utimesSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {stopRun, forwardedRunArgs} from '../../src/operator/control.js'
import {helixInProcess as helix} from '../support/in-process.js'
import {killQuietly, project, sleeper} from './helpers.js'
import {pidAlive} from '../../src/state/pidfile.js'

const kids: number[] = []
afterEach(() => {
  while (kids.length) killQuietly(kids.pop())
})

const pidFile = (root: string) => path.join(root, '.ddx', 'helix.pid')

describe('helix stop', () => {
  it('no pid file: exit 1, one line', async () => {
    const root = project()
    const r = await helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('helix: no active run (no PID file)\n')
  })

  it('dead pid: file removed, exit 1', async () => {
    const root = project()
    const s = spawnSync('true')
    expect(s.status).toBe(0)
    writeFileSync(pidFile(root), `${s.pid} 2026-01-01T00:00:00.000Z\n`)
    const r = await helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} was not running)\n`)
    expect(existsSync(pidFile(root))).toBe(false)
  })

  it('live run: SIGTERM ends it, pid file cleared, exit 0', async () => {
    const root = project()
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(pidFile(root), `${s.pid} ${new Date().toISOString()}\n`)
    const r = await helix(root, ['stop'])
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe(`helix: stopped (pid=${s.pid})\n`)
    expect(r.code).toBe(0)
    expect(pidAlive(s.pid!)).toBe(false)
    expect(existsSync(pidFile(root))).toBe(false)
  })

  it('a pid file whose pid now belongs to a younger process (reboot, reuse) is stale: nothing is signalled', async () => {
    const root = project()
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(pidFile(root), `${s.pid} 2026-01-01T00:00:00.000Z\n`)
    const st = await helix(root, ['status', '--json'])
    expect(JSON.parse(st.stdout).active_run).toBeNull()
    // the process is alive: the words say whose pid it is, not that it was not running
    expect(st.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} is another process, not a helix run)\n`)
    writeFileSync(pidFile(root), `${s.pid} 2026-01-01T00:00:00.000Z\n`)
    const r = await helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} is another process, not a helix run)\n`)
    expect(pidAlive(s.pid!)).toBe(true)
    expect(existsSync(pidFile(root))).toBe(false)
  })

  it('an old pid file holding no pid is named so, not "pid=0 was not running"', async () => {
    const root = project()
    writeFileSync(pidFile(root), 'garbage\n')
    const old = new Date(Date.now() - 60_000)
    utimesSync(pidFile(root), old, old)
    const r = await helix(root, ['stop'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('helix: stale PID file removed (it held no process id)\n')
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
  it('forwards every run flag, adding --summary once', async () => {
    expect(forwardedRunArgs(['--max-cycles', '3', '-s', '--claude', '--summary'])).toEqual(['--max-cycles', '3', '--claude'])
  })

  it('refuses while a run is active: exit 2, nothing written', async () => {
    const root = project()
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(pidFile(root), `${s.pid} ${new Date().toISOString()}\n`)
    const r = await helix(root, ['start', '--max-cycles', '1'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^helix start: already running \\(pid=${s.pid}, started=\\d{4}-.*Z\\)\\n$`))
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
  })
})

describe('a pid file caught mid-creation', () => {
  it('an empty, brand-new pid file is neither removed by status nor by stop', async () => {
    const root = project()
    // "brand-new" is younger than 5 s (status/report.ts, status/control.ts): the file is
    // dated a minute ahead before each command, so it is that new however slowly a loaded
    // machine starts the CLI (an overloaded 2-core box took more than 5 s to start status)
    const fresh = () => utimesSync(pidFile(root), new Date(Date.now() + 60_000), new Date(Date.now() + 60_000))
    writeFileSync(pidFile(root), '')
    fresh()
    const st = await helix(root, ['status', '--json'])
    expect(st.code).toBe(0)
    expect(st.stderr).toBe('')
    expect(existsSync(pidFile(root))).toBe(true)
    fresh()
    const r = await helix(root, ['stop'])
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

  it('a run refused at once (bad flag): its one line, and no start log or log directory left behind', async () => {
    const {root, run} = await withEntry("process.stderr.write(\"helix: invalid --max-cycles '-1': expected a whole number ≥ 0\\n\"); process.exit(1)\n")
    await expect(run()).rejects.toMatchObject({exitCode: 1, message: "helix: invalid --max-cycles '-1': expected a whole number ≥ 0"})
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
  })
})
