import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, project, waitFor} from './helpers.js'

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
    expect(await waitFor(() => /Ready: +1/.test(capture(name)), 15_000)).toBe(true)
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
    expect(await waitFor(() => /Total: +3/.test(capture(name)), 15_000)).toBe(true)
    screen = capture(name)
    expect(screen).toMatch(/Ready: +2/)
    expect(screen.match(/^Tracker:/gm)).toHaveLength(1)

    spawnSync('tmux', ['send-keys', '-t', name, 'C-c'])
    expect(await waitFor(() => {
      try {
        return readFileSync(rcFile, 'utf8').trim() !== ''
      } catch {
        return false
      }
    }, 10_000)).toBe(true)
    expect(readFileSync(rcFile, 'utf8').trim()).toBe('0')
  })
})
