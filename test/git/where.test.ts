// The run's start-up check of the checkout (src/git/where.ts, session 30) on real
// repositories: what it learns (top level, prefix, common directory, branch) must be
// exactly what the landing would have asked git for, so the landing may reuse it.
import {mkdirSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {inspectCheckout} from '../../src/git/where.js'
import {openLandingRepo} from '../../src/landing/landing-repo.js'
import {createGitLanding} from '../../src/landing/local.js'
import {g, gitTestEnv, makeRepo} from '../landing/helpers.js'
import {makeTempDir} from '../support/tmp.js'

// temp directories (the repositories included) are removed after each test by the rig (test/support/tmp.ts)
const repo = (): string => makeRepo('helix-where-')

/** the landing's own answer, asked the way it asks without facts */
async function asked(root: string) {
  const r = await openLandingRepo(root, path.join(root, '.ddx'), gitTestEnv)
  return {top: r.top, prefix: r.prefix, commonDir: r.commonDir}
}

describe('inspectCheckout', () => {
  it('in the top level, a subdirectory and through a symbolic link: the facts the landing would ask for', async () => {
    const root = repo()
    mkdirSync(path.join(root, 'sub'))
    const link = path.join(makeTempDir('helix-where-link-'), 'link')
    symlinkSync(root, link)
    for (const dir of [root, path.join(root, 'sub'), link, path.join(link, 'sub')]) {
      const c = await inspectCheckout(dir, gitTestEnv)
      expect(c.problem).toBeNull()
      expect(c.facts).toEqual({dir: path.resolve(dir), branch: 'main', ...(await asked(dir))})
    }
    expect((await inspectCheckout(path.join(link, 'sub'), gitTestEnv)).facts?.commonDir).toBe(path.join(link, '.git'))
  })

  it('detached HEAD has no branch; outside a repository there are no facts', async () => {
    const root = repo()
    g(root, 'checkout', '-q', '--detach')
    expect((await inspectCheckout(root, gitTestEnv)).facts?.branch).toBeNull()
    const plain = makeTempDir('helix-where-plain-')
    expect(await inspectCheckout(plain, {...gitTestEnv, GIT_CEILING_DIRECTORIES: path.dirname(plain)})).toEqual({problem: null, facts: null})
  })

  it('still refuses an attempt branch and an attempt worktree', async () => {
    const root = repo()
    const wt = path.join(root, '.helix', 'worktrees', 'hx-1-1')
    g(root, 'worktree', 'add', '-q', '-b', 'helix/hx-1-1', wt, 'main')
    expect((await inspectCheckout(wt, gitTestEnv)).problem).toMatch(/attempt branch helix\/hx-1-1.*main worktree/)
    g(wt, 'checkout', '-q', '--detach')
    expect((await inspectCheckout(wt, gitTestEnv)).problem).toMatch(/this is a helix attempt worktree/)
    expect((await inspectCheckout(root, gitTestEnv)).problem).toBeNull()
  })
})

describe('the landing reuses the facts', () => {
  const landing = (root: string, known: Parameters<typeof createGitLanding>[0]['known']) =>
    createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date(), known})

  it("takes the start-up check's branch as the base instead of asking again, and still checks it", async () => {
    const root = repo()
    g(root, 'branch', 'trunk')
    const facts = (await inspectCheckout(root, gitTestEnv)).facts!
    // told 'trunk' while HEAD is on main: the answer is the told one, so no second symbolic-ref ran
    expect(await landing(root, {...facts, branch: 'trunk'}).base()).toBe('trunk')
    expect(await landing(root, facts).base()).toBe('main')
    await expect(landing(root, {...facts, branch: 'helix/x'}).base()).rejects.toThrow(/collides with helix's attempt branches/)
    await expect(landing(root, {...facts, branch: 'gone'}).base()).rejects.toThrow(/branch gone has no commits yet/)
  })

  it('ignores facts asked in another directory', async () => {
    const root = repo()
    g(root, 'branch', 'trunk')
    mkdirSync(path.join(root, 'sub'))
    const facts = (await inspectCheckout(path.join(root, 'sub'), gitTestEnv)).facts!
    expect(await landing(root, {...facts, branch: 'trunk'}).base()).toBe('main')
    const r = await openLandingRepo(root, path.join(root, '.ddx'), gitTestEnv, facts)
    expect({top: r.top, prefix: r.prefix, commonDir: r.commonDir}).toEqual(await asked(root))
  })

  it('openLandingRepo with the facts answers as it does without them', async () => {
    const root = repo()
    mkdirSync(path.join(root, 'sub'))
    for (const dir of [root, path.join(root, 'sub')]) {
      const facts = (await inspectCheckout(dir, gitTestEnv)).facts!
      const a = await openLandingRepo(dir, path.join(root, '.ddx'), gitTestEnv, facts)
      const b = await openLandingRepo(dir, path.join(root, '.ddx'), gitTestEnv)
      expect({...a, git: null}).toEqual({...b, git: null})
    }
  })
})
