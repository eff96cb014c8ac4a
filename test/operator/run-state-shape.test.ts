import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {readRunState} from '../../src/state/run-state.js'
import {helixInProcess as helix} from '../support/in-process.js'
import {killQuietly, project, sleeper} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

// status and next in-process (test/support/in-process.ts)

const kids: number[] = []
afterAll(() => kids.forEach(killQuietly))

const MISTYPED = {skipped: 'x', current_bead: 5, backoff_until: 7, focused_epic: {}, attempts: [1], cycles: 5, keep_me: true}

describe('run-state with values of the wrong type', () => {
  it('readRunState falls back to the empty value per key and keeps the rest', async () => {
    const file = path.join(makeTempDir('helix-rs-'), 'run-state.json')
    writeFileSync(file, JSON.stringify({...MISTYPED, pid: 'abc', completed_cycles: 3, phase: 'running'}))
    const rs = (await readRunState(file))!
    expect(rs).toMatchObject({pid: null, skipped: [], current_bead: null, backoff_until: {}, focused_epic: null, attempts: {}, cycles: [], completed_cycles: 3, phase: 'running'})
    expect((rs as unknown as Record<string, unknown>).keep_me).toBe(true)
  })

  it('status, status --json and next still answer during an active run', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a'}]})
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${s.pid} ${new Date().toISOString()}\n`)
    writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify({...MISTYPED, pid: s.pid}))
    const text = await helix(root, ['status'])
    expect([text.code, text.stderr]).toEqual([0, ''])
    expect(text.stdout).toContain(`PID:     ${s.pid}`)
    const json = await helix(root, ['status', '--json'])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout).running_bead).toBeNull()
    expect(await helix(root, ['next'])).toMatchObject({code: 0, stdout: 'hx-a  a\n', stderr: ''})
  })
})
