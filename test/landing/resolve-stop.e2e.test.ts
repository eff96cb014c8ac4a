// SPEC 18.1a / 18.2 / 20.4 through the built CLI (npm run build first), session 34's
// adversary: helix stopped (SIGTERM) or killed (kill -9) while a resolve is at work.
// A stop keeps the work (rebase aborted) and reopens the bead; a kill is finished by
// the next start without running the implementing agent again, and what lands holds
// no conflict marker.
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixProject, type HelixProject} from '../support/project.js'
import {trackProcess} from '../support/tmp.js'

const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m
const ident = {GIT_AUTHOR_NAME: 'agent', GIT_AUTHOR_EMAIL: 'agent@example.com', GIT_COMMITTER_NAME: 'agent', GIT_COMMITTER_EMAIL: 'agent@example.com'}

async function conflicted(resolve: string): Promise<HelixProject> {
  const p = await helixProject({
    beads: [{id: 'hx-b'}],
    git: true,
    prefix: 'helix-resolve-stop-',
    agent: {implementation: {default: 'append-word:shared.txt commit close'}, resolve},
  })
  writeFileSync(path.join(p.root, 'shared.txt'), 'start\n')
  writeFileSync(path.join(p.root, '.gitignore'), '.ddx/\n')
  p.git('add', 'shared.txt', '.gitignore')
  p.git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '-m', 'shared file')
  return p
}
// the check's first run lands an operator's edit of the same line on main (as another slot
// would), so the candidate is rebased and stops on a conflict: no race decides it
const check = (p: HelixProject) =>
  `if [ ! -e '${p.base}/moved' ]; then touch '${p.base}/moved'; cd "$HELIX_PROJECT" && printf 'start operator\\n' > shared.txt && git -c user.email=o@o -c user.name=o commit -qam operator; exit 0; fi; ! grep -qE '^(<<<<<<< |=======|>>>>>>> )' shared.txt`
const resolving = (p: HelixProject) => p.calls().some((c) => c.action === 'resolve')
const implOf = (p: HelixProject, id: string) => p.calls().filter((c) => c.action === 'implementation' && c.bead === id).length

describe('helix stopped or killed during a resolve', () => {
  it('SIGTERM: exit 143, the work kept with its rebase aborted, the bead reopened, nothing left', async () => {
    await using p = await conflicted('hang')
    const run = p.start(['run', '--workers', '2', '--no-auto-review', '--land-check', check(p)], ident)
    await p.waitFor(() => resolving(p), 90_000)
    for (const c of p.calls()) trackProcess(c.pid)
    run.child.kill('SIGTERM')
    const r = await run.done
    expect(r.code, run.output).toBe(143)
    const b = p.beads().get('hx-b')
    expect(b?.status).toBe('open')
    expect(String(b?.notes)).toMatch(/NOT LANDED \[[^\]]+\]: interrupted; work kept at refs\/helix\/preserved\/hx-b\/1/)
    expect(p.git('show', 'refs/helix/preserved/hx-b/1:shared.txt')).not.toMatch(MARKER)
    expect(p.git('show', 'refs/helix/preserved/hx-b/1:shared.txt')).toMatch(/hx-b/)
    expect(p.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)
    expect(p.git('for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
  }, 150_000)

  it('kill -9: the next run finishes the attempt (resolve, not implementation) and lands it once, no marker on the base', async () => {
    await using p = await conflicted('hang')
    const run = p.start(['run', '--workers', '2', '--no-auto-review', '--land-check', check(p)], ident)
    await p.waitFor(() => resolving(p), 90_000)
    run.child.kill('SIGKILL')
    await run.done
    // the dead run's agents die with it (a reboot)
    for (const c of p.calls()) {
      trackProcess(c.pid)
      try {
        process.kill(c.pid, 'SIGKILL')
      } catch {
        // gone already
      }
    }
    p.script({implementation: {default: 'append-word:shared.txt commit close'}, resolve: 'resolve-union'})
    const again = p.helix(['run', '--workers', '2', '--no-auto-review', '--land-check', check(p)], ident)
    expect(again.code, again.stderr).toBe(0)
    expect(implOf(p, 'hx-b'), again.stderr).toBe(1)
    expect(again.stderr).toMatch(/resuming hx-b attempt 1 after a crash: 1 commit\(s\) to land/)
    expect(again.stderr).toMatch(/hx-b CONFLICT in 1 file\(s\) → resolve/)
    expect(again.stderr).toMatch(/resolved, landed hx-b \(1 commit/)
    expect(p.beads().get('hx-b')?.status).toBe('closed')
    const line = p.git('show', 'main:shared.txt').split('\n')[0] ?? ''
    expect(line.split(' ').filter((w) => w === 'hx-b')).toHaveLength(1)
    expect(line.split(' ').filter((w) => w === 'operator')).toHaveLength(1)
    for (const c of p.git('rev-list', 'main', '--', 'shared.txt').split('\n')) expect(p.git('show', `${c}:shared.txt`), c).not.toMatch(MARKER)
    expect(p.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)
  }, 200_000)
})
