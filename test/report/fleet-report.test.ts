// SPEC 22.2's refusals and the empty fleet of `helix report --remote`, in-process
// (test/support/in-process.ts): a bare remote and a clone, no CLI start. The fleet's hosts
// running and pushing their records: fleet-report.e2e.test.ts.
import {describe, expect, it} from 'vitest'
import {bead, g, makeFleet} from '../remote/helpers.js'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'

async function report(cwd: string, ...args: string[]) {
  const r = await helixInProcess(cwd, ['report', ...args], {...GIT_ISOLATION, COLUMNS: '200'})
  return {status: r.code, stdout: r.stdout, stderr: r.stderr}
}

describe('helix report --remote (in-process)', () => {
  it('bad input: an unknown remote is one line, exit 1, nothing written', async () => {
    const f = makeFleet([bead('hx-1')])
    const op = f.clone('operator')
    const r = await report(op, '--remote', 'upstream')
    expect(r.status).toBe(1)
    expect(r.stderr.trim()).toBe("helix report: --remote upstream: no such git remote here (see 'git remote -v')")
    expect(r.stdout).toBe('')
    expect(g(op, 'status', '--porcelain')).toBe('')
  })

  it('a fleet without run records yet: 0 runs, and says where they would be', async () => {
    const f = makeFleet([bead('hx-1')])
    const op = f.clone('operator')
    const r = await report(op, '--remote', 'origin')
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain('fleet: origin/main at ')
    expect(r.stdout).toContain('no host has pushed run records yet')
    expect(r.stdout).toContain('nothing ran in this window (run records: refs/helix/runs/* on origin)')
  })
})
