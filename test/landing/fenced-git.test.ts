// Git run inside an attempt worktree never reaches the project's own checkout:
// with the worktree's .git file gone (a removal cut short by a kill), discovery
// stops at .helix/worktrees instead of finding the project root's repository.
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {fencedEnv, git} from '../../src/git/run.js'
import {g, gitTestEnv, makeRepo} from './helpers.js'

describe('fencedEnv / git() in an attempt worktree', () => {
  it("a broken worktree is 'not a git repository', the root and a healthy worktree work as before", async () => {
    const root = makeRepo()
    const broken = path.join(root, '.helix', 'worktrees', 'hx-1-1')
    mkdirSync(path.join(broken, 'sub'), {recursive: true})
    writeFileSync(path.join(broken, 'sub', 'x.ts'), 'x\n')
    const before = g(root, 'rev-parse', 'HEAD')
    // without the fence, git finds the root repository from here
    expect(g(broken, 'rev-parse', '--show-toplevel')).toBe(root)
    const add = await git(['add', '-A'], {cwd: path.join(broken, 'sub'), env: gitTestEnv})
    expect(add.code).not.toBe(0)
    expect(add.stderr).toMatch(/not a git repository/)
    expect((await git(['commit', '-q', '-m', 'x', '--allow-empty'], {cwd: broken, env: gitTestEnv})).code).not.toBe(0)
    expect(g(root, 'rev-parse', 'HEAD')).toBe(before)

    const ok = path.join(root, '.helix', 'worktrees', 'hx-2-1')
    g(root, 'worktree', 'add', '-q', '-b', 'helix/hx-2-1', ok)
    expect((await git(['rev-parse', '--show-toplevel'], {cwd: path.join(ok), env: gitTestEnv})).stdout.trim()).toBe(ok)
    expect((await git(['rev-parse', '--show-toplevel'], {cwd: root, env: gitTestEnv})).stdout.trim()).toBe(root)
    rmSync(path.join(root, '.helix'), {recursive: true, force: true})
    g(root, 'worktree', 'prune')
  })

  it('adds the ceiling only inside .helix/worktrees, before any ceiling already set', () => {
    const env = {PATH: '/bin'}
    expect(fencedEnv('/p/src', env)).toBe(env)
    expect(fencedEnv('/p/.helix/worktrees/hx-1-2/a/b', env).GIT_CEILING_DIRECTORIES).toBe('/p/.helix/worktrees')
    expect(fencedEnv('/p/.helix/worktrees/hx-1-2', {GIT_CEILING_DIRECTORIES: '/home'}).GIT_CEILING_DIRECTORIES).toBe('/p/.helix/worktrees:/home')
    expect(fencedEnv('/p/.helix/worktrees', env)).toBe(env)
  })
})
