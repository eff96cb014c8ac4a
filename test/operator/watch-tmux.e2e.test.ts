import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, project, waitFor} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const sessions: string[] = []
afterEach(() => {
  while (sessions.length) spawnSync('tmux', ['kill-session', '-t', sessions.pop()!])
})

function capture(name: string): string {
  return spawnSync('tmux', ['capture-pane', '-p', '-t', name], {encoding: 'utf8'}).stdout
}

describe.runIf(hasTmux)('helix status --watch in an 80×24 tmux pane', () => {
  it('draws one screen, redraws with new tracker state, exits 0 on Ctrl-C', async () => {
    const root = project({beads: [{id: 'hx-one', title: 'First bead', status: 'open'}]})
    const name = `helix-watch-${process.pid}-${Date.now()}`
    sessions.push(name)
    const rcFile = path.join(root, 'rc')
    const cmd = `cd '${root}' && NODE_ENV=production '${process.execPath}' '${BIN}' status --watch 1; echo $? > '${rcFile}'; sleep 30`
    const r = spawnSync('tmux', ['new-session', '-d', '-s', name, '-x', '80', '-y', '24', cmd])
    expect(r.status).toBe(0)
    await waitFor(() => /Ready: +1/.test(capture(name)), 15_000)
    let screen = capture(name)
    expect(screen).toMatch(/helix status — every 1s/)
    expect(screen).toMatch(/^Tracker:/m)
    expect(screen).toMatch(/^  Total: +1/m)
    expect(screen).toMatch(/^Active Run: none/m)
    expect(screen.split('\n').length).toBeLessThanOrEqual(25)

    // the tracker changes: the next frame shows it, in place (one Tracker: header on screen)
    writeFileSync(
      path.join(root, '.ddx', 'beads.jsonl'),
      [{id: 'hx-one', title: 'First bead', status: 'closed'}, {id: 'hx-two', title: 'Second', status: 'open'}, {id: 'hx-three', title: 'Third', status: 'open'}]
        .map((b) => JSON.stringify(b))
        .join('\n') + '\n',
    )
    await waitFor(() => /Total: +3/.test(capture(name)), 15_000)
    screen = capture(name)
    expect(screen).toMatch(/Ready: +2/)
    expect(screen.match(/^Tracker:/gm)).toHaveLength(1)

    spawnSync('tmux', ['send-keys', '-t', name, 'C-c'])
    await waitFor(() => {
      try {
        return readFileSync(rcFile, 'utf8').trim() !== ''
      } catch {
        return false
      }
    }, 10_000)
    expect(readFileSync(rcFile, 'utf8').trim()).toBe('0')
  })
})

describe.runIf(hasTmux)('helix start from a tmux pane', () => {
  it('the run survives the pane being killed (terminal hangup)', async () => {
    const {existsSync, readFileSync: rf, writeFileSync: wf} = await import('node:fs')
    const {pidAlive} = await import('../../src/state/pidfile.js')
    const {REPO, killQuietly} = await import('./helpers.js')
    const root = project({beads: [{id: 'hx-aaaa0001', title: 'Hang here', status: 'open'}]})
    spawnSync('git', ['init', '-q'], {cwd: root})
    const binDir = path.join(root, 'stubbin')
    const stubDir = makeTempDir('helix-ops-stub-')
    const {installStubs} = await import(path.join(REPO, 'fixtures', 'agents', 'install-stubs.mjs'))
    installStubs(binDir)
    wf(path.join(stubDir, 'script.json'), JSON.stringify({implementation: {default: ['hang']}}))
    const name = `helix-start-${process.pid}-${Date.now()}`
    sessions.push(name)
    const cmd = `cd '${root}' && PATH='${binDir}':"$PATH" HELIX_STUB_DIR='${stubDir}' NODE_ENV=production '${process.execPath}' '${BIN}' start --codex; sleep 60`
    expect(spawnSync('tmux', ['new-session', '-d', '-s', name, '-x', '80', '-y', '24', cmd]).status).toBe(0)
    await waitFor(() => /helix: started \(pid=\d+/.test(capture(name)), 20_000)
    const pid = Number(/pid=(\d+)/.exec(capture(name))![1])
    try {
      await waitFor(() => existsSync(path.join(stubDir, 'calls.jsonl')), 20_000)
      const panePid = Number(spawnSync('tmux', ['display-message', '-p', '-t', name, '#{pane_pid}'], {encoding: 'utf8'}).stdout.trim())
      expect(panePid).toBeGreaterThan(0)
      spawnSync('tmux', ['kill-session', '-t', name])
      sessions.pop()
      // the hangup has been delivered once the pane's shell is gone; the run must outlive it
      await waitFor(() => !pidAlive(panePid), 10_000)
      expect(pidAlive(pid)).toBe(true)
      expect(rf(path.join(root, '.ddx', 'helix.pid'), 'utf8').startsWith(`${pid} `)).toBe(true)
    } finally {
      try {
        process.kill(pid, 'SIGTERM')
      } catch {
        // gone
      }
      await waitFor(() => !pidAlive(pid), 20_000).catch(() => undefined) // then SIGKILL below
      killQuietly(pid)
    }
  })
})
