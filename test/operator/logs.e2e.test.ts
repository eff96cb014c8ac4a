// `helix logs --follow` until SIGINT, through the built CLI (a signal to a process); the
// rendering, lookup and tailing, and `helix logs` without --follow: logs.test.ts.
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {openSessionLog} from '../../src/output/session-log.js'
import {project, waitFor} from './helpers.js'
import {startCli} from '../support/cli.js'

describe('helix logs --follow', () => {
  it('--follow prints appended records until SIGINT, then exits 0', async () => {
    const root = project()
    const log = await openSessionLog(path.join(root, '.helix-logs'))
    log.event('first')
    const {child} = startCli(['logs', '--follow'], {cwd: root})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    await waitFor(() => out.includes('first'), 15_000)
    log.agentLine('streamed line', {dispatch: 1})
    await waitFor(() => out.includes('│ streamed line'), 15_000)
    log.close()
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c))
      child.kill('SIGINT')
    })
    expect(code).toBe(0)
  })
})

describe('--follow before any run', () => {
  it('waits for the first session log, then follows it', async () => {
    const root = project()
    const {child} = startCli(['logs', '-f'], {cwd: root})
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    await waitFor(() => err.includes('waiting for a session log'), 15_000)
    const log = await openSessionLog(path.join(root, '.helix-logs'))
    log.event('hello from the run')
    await waitFor(() => out.includes('hello from the run'), 15_000)
    log.close()
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c))
      child.kill('SIGINT')
    })
    expect(code).toBe(0)
  })
})
