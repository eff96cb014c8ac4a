// The one test project (project.ts) with the built CLI: `await using` cleans up.
import {existsSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixProject} from './project.js'
import {waitFor} from './wait.js'

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('helixProject', () => {
  it('`await using` a project: tracker, stubs and git are there; leaving the block kills what it started and removes it', async () => {
    let base: string
    let pid: number | undefined
    {
      await using project = await helixProject({beads: [{id: 'hx-1'}], agent: {}, git: true})
      base = project.base
      expect([...project.beads().keys()]).toEqual(['hx-1'])
      expect(project.beads().get('hx-1')).toMatchObject({status: 'open', title: 'bead hx-1'})
      expect(project.git('rev-list', '--count', 'HEAD')).toBe('1')
      expect(existsSync(path.join(project.binDir, 'codex'))).toBe(true)
      expect(project.env.PATH.startsWith(project.binDir)).toBe(true)
      // a CLI child that would outlive the test (`status --watch` never ends by itself)
      const watch = project.start(['status', '--watch'])
      pid = watch.child.pid
      await project.waitFor(() => watch.stdout.length > 0, {timeoutMs: 30_000, what: 'the first status frame'})
      expect(alive(pid!)).toBe(true)
    }
    expect(existsSync(base)).toBe(false)
    await waitFor(() => !alive(pid!), {what: 'the watch process to die'})
  })

})
