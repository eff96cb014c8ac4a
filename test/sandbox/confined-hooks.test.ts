// proc/confined-hooks.ts: the shims a --sandbox run points core.hooksPath at. A hook
// still runs and its exit code still counts; it sees the variables git sets for it; it
// cannot write outside; the operator's own GIT_CONFIG_COUNT entries stay in force; and
// the other side of a local push keeps its own hooks.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {confineGitHooks} from '../../src/proc/confined-hooks.js'
import {DEFAULT_SANDBOX} from '../../src/proc/sandbox.js'
import {makeTempDir} from '../support/tmp.js'
import {gitEnv, gitSeq} from '../support/git.js'
import {hasBwrap} from './helpers.js'

function repo() {
  const base = makeTempDir('helix-hooks-')
  const root = path.join(base, 'repo')
  const allowed = path.join(base, 'allowed')
  mkdirSync(path.join(root, '.githooks'), {recursive: true})
  mkdirSync(allowed)
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Op'], ['config', 'core.hooksPath', '.githooks'], ['commit', '-q', '--allow-empty', '-m', 'init'])
  const env = confineGitHooks(root, {...DEFAULT_SANDBOX, writable: [allowed]}, {...gitEnv, HOME: path.join(base, 'home')}, [root])
  const run = (...args: string[]) => spawnSync('git', args, {cwd: root, env, encoding: 'utf8'})
  const hook = (name: string, body: string) => writeFileSync(path.join(root, '.githooks', name), `#!/bin/sh\n${body}\n`, {mode: 0o755})
  return {base, root, allowed, env, run, hook}
}

describe.skipIf(!hasBwrap)('git hooks of a sandboxed run (proc/confined-hooks.ts)', () => {
  it('a hook runs confined: its exit code counts, it sees GIT_INDEX_FILE, its write outside fails', () => {
    const p = repo()
    const outside = path.join(p.base, 'escaped')
    p.hook('pre-commit', `echo "$GIT_INDEX_FILE" > ${p.allowed}/index; echo x > ${outside}; exit 1`)
    const refused = p.run('commit', '-q', '--allow-empty', '-m', 'refused')
    expect(refused.status).not.toBe(0)
    expect(readFileSync(path.join(p.allowed, 'index'), 'utf8').trim()).toMatch(/index$/)
    expect(existsSync(outside)).toBe(false)
    p.hook('pre-commit', 'exit 0')
    expect(p.run('commit', '-q', '--allow-empty', '-m', 'accepted').status).toBe(0)
    // no hook at all: the shim lets git go on
    expect(p.run('update-ref', 'refs/heads/other', 'HEAD').status).toBe(0)
  })

  it("keeps the operator's own GIT_CONFIG_COUNT entries, and a local remote's own hooks", () => {
    const base = makeTempDir('helix-hooks-env-')
    const root = path.join(base, 'repo')
    const bare = path.join(base, 'remote.git')
    mkdirSync(root)
    gitSeq(base, ['init', '-q', '--bare', bare])
    writeFileSync(path.join(bare, 'hooks', 'pre-receive'), '#!/bin/sh\necho remote-hook-ran >&2\n', {mode: 0o755})
    gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Op'], ['commit', '-q', '--allow-empty', '-m', 'init'])
    const env = confineGitHooks(root, DEFAULT_SANDBOX, {...gitEnv, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'helix.test', GIT_CONFIG_VALUE_0: 'kept'}, [root])
    expect(env.GIT_CONFIG_COUNT).toBe('2')
    const get = spawnSync('git', ['config', 'helix.test'], {cwd: root, env, encoding: 'utf8'})
    expect(get.stdout.trim()).toBe('kept')
    const push = spawnSync('git', ['push', bare, 'HEAD:refs/heads/main'], {cwd: root, env, encoding: 'utf8'})
    expect(push.status).toBe(0)
    expect(push.stderr).toContain('remote-hook-ran')
  })
})
