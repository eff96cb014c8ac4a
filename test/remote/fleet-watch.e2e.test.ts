// issue 29: `helix status --remote origin --watch` printed once and exited; it must redraw
// the fleet (read again from the remote) until interrupted.
import {appendFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {startCli} from '../support/cli.js'
import {waitFor} from '../support/wait.js'
import {bead, g, gitTestEnv, makeFleet} from './helpers.js'

describe('helix status --remote --watch', () => {
  it('redraws the fleet as the remote changes, until interrupted', async () => {
    const f = makeFleet([bead('hx-1'), bead('hx-2')])
    const host = f.clone('a')
    const other = f.clone('b')
    const w = startCli(['status', '--remote', 'origin', '--watch', '1'], {cwd: host, env: gitTestEnv})
    await waitFor(() => w.stdout.includes('fleet origin/main'), {timeoutMs: 90_000, what: 'the first frame'})
    // another host adds a bead to the base: a later frame shows it
    appendFileSync(path.join(other, '.ddx', 'beads.jsonl'), JSON.stringify(bead('hx-3')) + '\n')
    g(other, 'commit', '-qam', 'a third bead')
    g(other, 'push', '-q', 'origin', 'main')
    await waitFor(() => w.stdout.includes('3 beads'), {timeoutMs: 90_000, what: 'a frame with the new bead'})
    expect(w.child.exitCode).toBeNull()
    w.child.kill('SIGINT')
    const r = await w.done
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('2 beads')
  }, 240_000)
})
