import path from 'node:path'
import {rmSync} from 'node:fs'
import {afterEach, describe, expect, it} from 'vitest'
import {stubProject, type StubEnv} from './helpers.js'
import {runCli} from '../support/cli.js'

// One-shot commands do not pause (SPEC 14.3): an agent out of quota or unavailable
// ends them with exit 4 and one line naming the cause. The BUILT cli (npm run build first):
// exit 4 as the shell sees it; the other causes' lines run in-process (oneshot-cli.test.ts).

const projects: StubEnv[] = []
afterEach(() => {
  for (const p of projects.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

function project(script: Record<string, unknown>): StubEnv {
  const p = stubProject()
  projects.push(p)
  p.script(script)
  return p
}

function helix(p: StubEnv, args: string[]) {
  return runCli(args, {cwd: p.root, env: p.env})
}

describe('one-shot commands and agent health', () => {
  it('claude not logged in (the real capture): exit 4, `helix: agent claude unavailable: Not logged in …`', () => {
    const p = project({check: ['unavailable']})
    const r = helix(p, ['check', '--claude'])
    expect(r.code).toBe(4)
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('helix: agent claude unavailable: Not logged in · Please run /login')
  })
})
