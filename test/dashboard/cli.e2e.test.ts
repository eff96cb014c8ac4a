// `helix dashboard` as the operator runs it (the built CLI): bad input is one line and
// exit 1 before anything listens; a good start prints its address, serves the state
// of every --project, refuses a foreign Host, and ends on SIGTERM with exit 0.
import {createServer, type Server} from 'node:net'
import {get} from './serve.js'
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli, startCli} from '../support/cli.js'
import {waitFor} from '../support/wait.js'
import {trackerText} from '../support/project.js'

function project(title = 'a bead'): string {
  const root = path.join(makeTempDir('helix-dash-cli-'), 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText([{id: 'hx-a', title}]))
  return root
}

const servers: Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r))
})

describe('helix dashboard (CLI)', () => {
  it('a taken --port: one line, exit 1, nothing written (the other refusals: cli.test.ts, in-process)', async () => {
    const root = project()
    const taken = createServer()
    servers.push(taken)
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as {port: number}).port
    const r = runCli(['dashboard', '--port', String(port)], {cwd: root})
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: port ${port} is taken: choose another with --port N (or leave --port out for the next free one)\n`)
    // the page is read-only: nothing appeared in the project
    expect(existsSync(path.join(root, '.helix'))).toBe(false)
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
  })

  it('without --port takes 7420 or the next free one, serves every --project, refuses a foreign Host, ends on SIGTERM', async () => {
    const a = project('first project')
    const b = project('second project')
    const d = startCli(['dashboard', '--project', a, '--project', b], {cwd: a})
    await waitFor(() => /dashboard at/.test(d.stdout) || d.child.exitCode !== null, {timeoutMs: 20_000, what: 'the address line'})
    const m = /^helix: dashboard at http:\/\/127\.0\.0\.1:(\d+)\/\n$/.exec(d.stdout)
    expect(m, d.stdout + d.stderr).not.toBeNull()
    const port = Number(m![1])
    expect(port).toBeGreaterThanOrEqual(7420)
    const state = JSON.parse((await get(port, '/state.json')).body)
    expect(state.projects.map((p: {root: string}) => p.root)).toEqual([a, b])
    expect(state.projects[1].queue.ready[0].title).toBe('second project')
    const foreign = await get(port, '/state.json', `attacker.example:${port}`)
    expect(foreign.status).toBe(421)
    expect(foreign.body).not.toContain('project')
    d.child.kill('SIGTERM')
    const end = await d.done
    expect(end.code).toBe(0)
    expect(end.stderr).toBe('')
  })
})
