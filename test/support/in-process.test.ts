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
    const made = await runInProcess(TrackerCreate, ['A title', '--json'], {cwd: root})
    expect(made.code).toBe(0)
    const id = (JSON.parse(made.stdout) as {id: string}).id
    expect(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8')).toContain(id)
    expect(await runInProcess(TrackerShow, ['hx-nope'], {cwd: root})).toEqual({code: 1, stdout: '', stderr: 'helix: bead hx-nope not found\n'})
    // a parse error goes through the same boundary as in the CLI
    expect(await runInProcess(Run, ['--wokers', '2'], {cwd: root})).toEqual({code: 1, stdout: '', stderr: 'helix: Nonexistent flag: --wokers (did you mean --workers?)\n'})
    expect(process.cwd()).toBe(cwd)
    expect(process.env).toBe(env)
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
})
