// A real run started by `helix start` from a shell that exits at once, then stopped: the
// process is the point (the CLI's start, the detached run, its SIGTERM). The start and
// stop commands' refusals and stopRun/startRun with fakes: control.test.ts.
import {existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, helix, killQuietly, project, REPO, waitFor} from './helpers.js'
import {pidAlive} from '../../src/state/pidfile.js'
import {helixInProcess} from '../support/in-process.js'
import {makeTempDir} from '../support/tmp.js'

const kids: number[] = []
afterEach(() => {
  while (kids.length) killQuietly(kids.pop())
})

const pidFile = (root: string) => path.join(root, '.ddx', 'helix.pid')
const manifest = JSON.parse(readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8'))
const hasRun = Boolean(manifest.commands?.run)

describe('helix start', () => {
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
    const st = JSON.parse((await helixInProcess(root, ['status', '--json'], {PATH: `${binDir}:${process.env.PATH}`})).stdout)
    expect(st.active_run.pid).toBe(pid)
    // status during a real run: its bead, cycle and session log
    expect(st.running_bead).toMatchObject({id: 'hx-aaaa0001', title: 'Hang here'})
    expect(st.current_cycle).toBe(1)
    expect(st.active_run.log).toMatch(/\/\.helix-logs\/helix-\d{8}-\d{6}\.log$/)
    expect(existsSync(st.active_run.log)).toBe(true)
    const text = (await helixInProcess(root, ['status'])).stdout
    expect(text).toMatch(/^  Cycle: +1 +Bead: hx-aaaa0001 \(claimed \d+s ago\) Hang here$/m)
    expect(text).toMatch(/^  hx-aaaa0001 +Hang here \(by helix, pid \d+, \d+s ago\)$/m)
    // a second start is refused: exit 2 (busy) as a shell sees it
    const again = helix(root, ['start'])
    expect(again.code).toBe(2)

    const stop = await helixInProcess(root, ['stop'])
    expect(stop.stdout).toBe(`helix: stopped (pid=${pid})\n`)
    expect(stop.code).toBe(0)
    expect(pidAlive(pid)).toBe(false)
    expect(existsSync(pidFile(root))).toBe(false)
    expect(readdirSync(path.join(root, '.helix-logs')).some((n) => n.startsWith('start-'))).toBe(true)
    // the run handled SIGTERM itself: bead unclaimed, run-state says interrupted
    const bead = JSON.parse(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').trim())
    expect(bead.status).toBe('open')
    expect(JSON.parse(readFileSync(path.join(root, '.ddx', 'run-state.json'), 'utf8')).stop_reason).toBe('interrupted')
    const st2 = JSON.parse((await helixInProcess(root, ['status', '--json'])).stdout)
    expect(st2.active_run).toBeNull()
    expect(st2.last_stop_reason).toBe('interrupted')
  })
})
