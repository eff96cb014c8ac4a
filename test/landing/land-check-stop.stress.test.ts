// SPEC 18.1a / 18.2 / 20.3 through the built CLI (npm run build first), session 34's
// adversary: helix stopped (SIGTERM) or killed (kill -9) while the land check runs.
// A stop ends the check's processes, keeps the work and reopens the bead; a kill is
// finished by the next start, which checks the candidate again (the implementing agent
// does not run again) and never lands it red.
// They found no defect and are kept as coverage: `npm run test:stress` (HELIX_STRESS_FULL=1,
// in .ci/run) runs them; `npm test` skips them (itFull) to hold its time.
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {helixProject, type HelixProject} from '../support/project.js'
import {trackProcess} from '../support/tmp.js'
import {pidAlive} from '../../src/proc/process.js'

const itFull = STRESS_FULL ? it : it.skip

const ident = {GIT_AUTHOR_NAME: 'agent', GIT_AUTHOR_EMAIL: 'agent@example.com', GIT_COMMITTER_NAME: 'agent', GIT_COMMITTER_EMAIL: 'agent@example.com'}

async function oneBead(): Promise<HelixProject> {
  const p = await helixProject({beads: [{id: 'hx-a'}], git: true, prefix: 'helix-check-stop-', agent: {implementation: {default: 'touch:a.txt commit close'}}})
  writeFileSync(path.join(p.root, '.gitignore'), '.ddx/\n')
  p.git('add', '.gitignore')
  p.git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '-m', 'ignore the tracker')
  return p
}
// the check records its pid and its background child's, then waits for a file that never comes (or exits as $CHECK_RC says)
const check = (p: HelixProject) =>
  `echo $$ >> '${p.base}/check-pids'; sleep 600 & echo $! >> '${p.base}/check-pids'; if [ -e '${p.base}/release' ]; then exit "$(cat '${p.base}/release')"; fi; wait`
const pids = (p: HelixProject): number[] => (existsSync(path.join(p.base, 'check-pids')) ? readFileSync(path.join(p.base, 'check-pids'), 'utf8').split('\n').filter(Boolean).map(Number) : [])

describe('helix stopped or killed during the land check', () => {
  itFull('SIGTERM: exit 143, the check and its child ended, the work kept, the bead reopened', async () => {
    await using p = await oneBead()
    const run = p.start(['run', '--workers', '2', '--no-auto-review', '--land-check', check(p)], ident)
    await p.waitFor(() => pids(p).length >= 2, 90_000)
    for (const pid of pids(p)) trackProcess(pid)
    run.child.kill('SIGTERM')
    const r = await run.done
    expect(r.code, run.output).toBe(143)
    await p.waitFor(() => pids(p).every((pid) => !pidAlive(pid)), 20_000)
    const a = p.beads().get('hx-a')
    expect(a?.status).toBe('open')
    expect(String(a?.notes)).toMatch(/NOT LANDED \[[^\]]+\]: interrupted; work kept at refs\/helix\/preserved\/hx-a\/1/)
    expect(p.git('show', 'refs/helix/preserved/hx-a/1:a.txt')).toBe('hx-a')
    expect(p.git('ls-tree', '--name-only', 'main')).not.toMatch(/^a\.txt$/m)
    expect(p.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)
  }, 150_000)

  for (const rc of [0, 3]) {
    itFull(`kill -9, then a restart whose check ${rc === 0 ? 'passes: lands it once' : 'fails: never lands it'}, the agent not run again`, async () => {
      await using p = await oneBead()
      const run = p.start(['run', '--workers', '2', '--no-auto-review', '--land-check', check(p)], ident)
      await p.waitFor(() => pids(p).length >= 2, 90_000)
      run.child.kill('SIGKILL')
      await run.done
      // the dead run's check dies with it (a reboot)
      for (const pid of pids(p)) {
        trackProcess(pid)
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone already
        }
      }
      writeFileSync(path.join(p.base, 'release'), String(rc))
      const again = p.helix(['run', '--workers', '2', '--no-auto-review', '--resolve-attempts', '0', '--land-check', check(p)], ident)
      const out = again.stderr
      // the restart's first word on hx-a is the resume, before any new attempt of it
      const resumed = out.search(/resuming hx-a attempt 1 after a crash: 1 commit\(s\) to land/)
      expect(resumed, out).toBeGreaterThan(-1)
      const redo = out.search(/cycle=\d+, issue=hx-a/)
      expect(redo === -1 || redo > resumed, out).toBe(true)
      if (rc === 0) expect(p.calls().filter((c) => c.action === 'implementation' && c.bead === 'hx-a'), out).toHaveLength(1)
      if (rc === 0) {
        expect(again.code, out).toBe(0)
        expect(p.beads().get('hx-a')?.status).toBe('closed')
        expect(p.git('show', 'main:a.txt')).toBe('hx-a')
        expect(p.git('log', '--format=%s', 'main').split('\n').filter((s) => s === 'hx-a: stub work')).toHaveLength(1)
      } else {
        // the resumed attempt is not landed for its red check; the bead goes back to the queue and is tried again (red again)
        expect(out).toMatch(/hx-a land check FAILED \(rc=3, \d+s\)/)
        expect(out).toMatch(/cycle 1: hx-a not landed: land check failed \(rc=3\)/)
        expect(p.git('ls-tree', '--name-only', 'main')).not.toMatch(/^a\.txt$/m)
        expect(p.git('for-each-ref', '--format=%(refname)', 'refs/helix/preserved/hx-a/')).toMatch(/refs\/helix\/preserved\/hx-a\/1/)
      }
      expect(p.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)
    }, 200_000)
  }
})
