import {mkdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {Command} from '@oclif/core'
import {describe, expect, it} from 'vitest'
import TrackerCreate from '../../src/commands/tracker/create.js'
import TrackerShow from '../../src/commands/tracker/show.js'
import Run from '../../src/commands/run.js'
import {runInProcess} from './in-process.js'
import {makeTempDir} from './tmp.js'

describe('runInProcess: a command without a process start', () => {
  it('runs in the given directory, captures stdout, stderr and the exit code, and restores the process', async () => {
    const root = makeTempDir('helix-inproc-')
    mkdirSync(path.join(root, '.ddx'))
    const cwd = process.cwd()
    const env = process.env
    const handlers = () => ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listeners(s as NodeJS.Signals))
    const before = handlers()
    const made = await runInProcess(TrackerCreate, ['A title', '--json'], {cwd: root})
    expect(made.code).toBe(0)
    const id = (JSON.parse(made.stdout) as {id: string}).id
    expect(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8')).toContain(id)
    expect(await runInProcess(TrackerShow, ['hx-nope'], {cwd: root})).toEqual({code: 1, stdout: '', stderr: 'helix: bead hx-nope not found\n'})
    // a parse error goes through the same boundary as in the CLI
    expect(await runInProcess(Run, ['--wokers', '2'], {cwd: root})).toEqual({code: 1, stdout: '', stderr: 'helix: Nonexistent flag: --wokers (did you mean --workers?)\n'})
    expect(process.cwd()).toBe(cwd)
    expect(process.env).toBe(env)
    // `helix run` armed its signal handlers before its flags were refused: none is left on this worker
    expect(handlers()).toEqual(before)
  })

  it('a refused `helix run` leaves the next one its own signal handlers: a SIGTERM still ends that run the orderly way', async () => {
    const root = makeTempDir('helix-inproc-')
    mkdirSync(path.join(root, '.ddx'))
    expect((await runInProcess(Run, ['--max-cycles', 'x'], {cwd: root})).code).toBe(1)
    // the next arming installs its own handler: a controller left armed by the refused run (its
    // handlers taken off) would add none, and a SIGTERM would then kill the worker instead
    const {armRunSignals} = await import('../../src/cli/run-signals.js')
    const before = process.listenerCount('SIGTERM')
    const armed = armRunSignals()
    try {
      expect(process.listenerCount('SIGTERM')).toBe(before + 1)
      expect(armed.signal.aborted).toBe(false)
    } finally {
      armed.dispose()
    }
  })
})

describe('runInProcess: what a command leaves behind', () => {
  it('takes off a signal listener the command added and kept, and keeps the ones that were there', async () => {
    const root = makeTempDir('helix-inproc-')
    const mine = () => {}
    process.on('SIGHUP', mine)
    class Leaky extends Command {
      async run(): Promise<void> {
        await this.parse(Leaky)
        process.on('SIGINT', () => {})
        process.on('SIGHUP', () => {})
        process.exitCode = 4
      }
    }
    try {
      const sigint = process.listenerCount('SIGINT')
      expect(await runInProcess(Leaky, [], {cwd: root})).toEqual({code: 4, stdout: '', stderr: ''})
      expect(process.listenerCount('SIGINT')).toBe(sigint)
      expect(process.listeners('SIGHUP')).toContain(mine)
      expect(process.exitCode).toBeUndefined()
    } finally {
      process.off('SIGHUP', mine)
    }
  })
  it("takes off the 'error' listeners a run's terminal put on stdout and stderr: eleven in-process runs in one worker print no MaxListeners warning", async () => {
    const root = makeTempDir('helix-inproc-')
    class Terminal extends Command {
      async run(): Promise<void> {
        await this.parse(Terminal)
        // what src/output/terminal.ts does once per run, for a reader that goes away
        process.stdout.on('error', () => {})
        process.stderr.on('error', () => {})
      }
    }
    const out = process.stdout.listenerCount('error')
    const err = process.stderr.listenerCount('error')
    for (let i = 0; i < 11; i++) expect(await runInProcess(Terminal, [], {cwd: root})).toEqual({code: 0, stdout: '', stderr: ''})
    expect(process.stdout.listenerCount('error')).toBe(out)
    expect(process.stderr.listenerCount('error')).toBe(err)
  })
})
