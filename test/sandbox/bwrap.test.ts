// proc/sandbox.ts: the environment kept, the mount order, and (with the real bwrap)
// what a confined command can and cannot touch.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {DEFAULT_SANDBOX, probeSandbox, sandboxArgv, sandboxEnv, shellQuote} from '../../src/proc/sandbox.js'
import {parseConfig} from '../../src/config/project-config.js'
import {sandboxOptions} from '../../src/app/sandbox-options.js'
import {cyclesLine} from '../../src/operator/text.js'
import {makeTempDir} from '../support/tmp.js'

const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0

describe('sandboxEnv', () => {
  it('keeps PATH, HOME, locale, helix/ddx and the agents keys; drops tokens, sockets and the rest', () => {
    const env = {
      PATH: '/bin', HOME: '/h', LANG: 'C', LC_ALL: 'C', TERM: 'xterm', TZ: 'UTC', HELIX_X: '1', DDX_BEAD_DIR: '/d',
      ANTHROPIC_API_KEY: 'a', CLAUDE_CONFIG_DIR: 'c', OPENAI_API_KEY: 'o', CODEX_HOME: 'x',
      GH_TOKEN: 'secret', AWS_SECRET_ACCESS_KEY: 's', SSH_AUTH_SOCK: '/s', DBUS_SESSION_BUS_ADDRESS: 'd', NODE_ENV: 'test', MY_VAR: 'm', MINE_A: '1',
    }
    const kept = sandboxEnv({...DEFAULT_SANDBOX, env: ['MY_VAR', 'MINE_*']}, env)
    expect(Object.keys(kept).sort()).toEqual(
      ['ANTHROPIC_API_KEY', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'DDX_BEAD_DIR', 'HELIX_X', 'HOME', 'LANG', 'LC_ALL', 'MINE_A', 'MY_VAR', 'OPENAI_API_KEY', 'PATH', 'TERM', 'TZ'].sort(),
    )
  })
})

describe('sandboxArgv', () => {
  it('mounts the private /tmp and home before what is bound back under them, hides last, and cuts the network when asked', () => {
    const base = makeTempDir('helix-sbargv-')
    const home = path.join(base, 'home')
    const clone = path.join(base, 'proj', '.helix', 'sandbox', 'x-1')
    for (const d of [path.join(home, '.claude'), clone]) mkdirSync(d, {recursive: true})
    writeFileSync(path.join(home, '.claude', 'settings.json'), '{}')
    const argv = sandboxArgv({...DEFAULT_SANDBOX, network: 'none'}, ['agent', '--x'], {cwd: clone, rw: [clone], ro: [path.join(base, 'proj')], env: {HOME: home, PATH: '/usr/bin'}})
    const at = (flag: string, p: string) => argv.findIndex((a, i) => a === flag && argv[i + 1] === p)
    expect(at('--tmpfs', '/tmp')).toBeGreaterThan(0)
    expect(at('--tmpfs', home)).toBeGreaterThan(at('--tmpfs', '/tmp'))
    expect(at('--ro-bind', path.join(base, 'proj'))).toBeGreaterThan(at('--tmpfs', '/tmp'))
    expect(at('--bind', clone)).toBeGreaterThan(at('--ro-bind', path.join(base, 'proj')))
    expect(at('--bind', path.join(home, '.claude'))).toBeGreaterThan(at('--tmpfs', home))
    expect(at('--ro-bind', path.join(home, '.claude', 'settings.json'))).toBeGreaterThan(at('--bind', path.join(home, '.claude')))
    expect(argv.indexOf('--remount-ro')).toBeGreaterThan(at('--ro-bind', path.join(home, '.claude', 'settings.json')))
    for (const f of ['--unshare-pid', '--new-session', '--die-with-parent', '--unshare-net']) expect(argv).toContain(f)
    expect(argv.slice(argv.indexOf('--cap-drop'), argv.indexOf('--cap-drop') + 2)).toEqual(['--cap-drop', 'ALL'])
    expect(argv.slice(-2)).toEqual(['agent', '--x'])
  })

  it('quotes words for a shell only when needed', () => {
    expect(shellQuote('/usr/bin/bwrap')).toBe('/usr/bin/bwrap')
    expect(shellQuote("a b'c")).toBe(`'a b'\\''c'`)
  })
})

describe.skipIf(!hasBwrap)('a confined command (real bwrap)', () => {
  it('writes only its writable dirs and /tmp; home is empty and read-only; the rest is read-only', () => {
    const base = makeTempDir('helix-sbreal-')
    const home = path.join(base, 'home')
    const work = path.join(base, 'work')
    const outside = path.join(base, 'outside')
    for (const d of [path.join(home, '.ssh'), work, outside]) mkdirSync(d, {recursive: true})
    writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'secret')
    const script = [
      'echo in > work.txt && echo w=ok || echo w=fail',
      `echo x > ${outside}/x && echo o=ok || echo o=fail`,
      'echo x > "$HOME/x" && echo h=ok || echo h=fail',
      'cat "$HOME/.ssh/id_rsa" && echo k=ok || echo k=fail',
      'echo x > /tmp/x && echo t=ok || echo t=fail',
      'echo "tok=${GH_TOKEN:-none}"',
    ].join('\n')
    const env = {PATH: process.env.PATH, HOME: home, GH_TOKEN: 'secret'}
    const argv = sandboxArgv(DEFAULT_SANDBOX, ['/bin/sh', '-c', script], {cwd: work, rw: [work], ro: [], env})
    const r = spawnSync(argv[0], argv.slice(1), {env: sandboxEnv(DEFAULT_SANDBOX, env), encoding: 'utf8'})
    expect(r.stdout.split('\n').filter((l) => /^[a-z]+=/.test(l))).toEqual(['w=ok', 'o=fail', 'h=fail', 'k=fail', 't=ok', 'tok=none'])
    expect(readFileSync(path.join(work, 'work.txt'), 'utf8')).toBe('in\n')
    expect(existsSync(path.join(outside, 'x'))).toBe(false)
    expect(existsSync(path.join(home, 'x'))).toBe(false)
  })

  it.skipIf(!existsSync('/dev/shm'))('a project and a tool on PATH under /dev/shm are there inside (--dev mounts a fresh /dev over them)', () => {
    const base = makeTempDir('helix-sbshm-', '/dev/shm')
    const work = path.join(base, 'work')
    const tools = path.join(base, 'bin')
    for (const d of [work, tools]) mkdirSync(d, {recursive: true})
    writeFileSync(path.join(tools, 'tool'), '#!/bin/sh\necho tool=ok\n', {mode: 0o755})
    const env = {PATH: `${tools}:${process.env.PATH}`, HOME: path.join(base, 'home')}
    const argv = sandboxArgv(DEFAULT_SANDBOX, ['/bin/sh', '-c', 'tool; echo in > work.txt && echo w=ok || echo w=fail; echo x > ../x && echo o=ok || echo o=fail'], {cwd: work, rw: [work], ro: [], env})
    const r = spawnSync(argv[0], argv.slice(1), {env: sandboxEnv(DEFAULT_SANDBOX, env), encoding: 'utf8'})
    // beside the work, a write lands in the sandbox's private /dev (as one in /tmp does): no effect outside
    expect(r.stdout.split('\n').filter((l) => /^[a-z]+=/.test(l))).toEqual(['tool=ok', 'w=ok', 'o=ok'])
    expect(readFileSync(path.join(work, 'work.txt'), 'utf8')).toBe('in\n')
    expect(existsSync(path.join(base, 'x'))).toBe(false)
  })

  it("the agents' config files are read-only also before they exist; the state directories stay writable", () => {
    const base = makeTempDir('helix-sbcfg-')
    const home = path.join(base, 'home')
    const work = path.join(base, 'work')
    for (const d of [path.join(home, '.claude'), path.join(home, '.codex'), work]) mkdirSync(d, {recursive: true})
    const script = [
      'echo \'{"hooks":{}}\' > "$HOME/.claude/settings.json" && echo s=ok || echo s=fail',
      'echo evil > "$HOME/.claude/CLAUDE.md" && echo m=ok || echo m=fail',
      'echo x > "$HOME/.codex/config.toml" && echo c=ok || echo c=fail',
      'echo x > "$HOME/.codex/AGENTS.md" && echo a=ok || echo a=fail',
      'echo x > "$HOME/.claude/history.jsonl" && echo st=ok || echo st=fail',
    ].join('\n')
    const env = {PATH: process.env.PATH, HOME: home}
    const argv = sandboxArgv(DEFAULT_SANDBOX, ['/bin/sh', '-c', script], {cwd: work, rw: [work], ro: [], env})
    const r = spawnSync(argv[0], argv.slice(1), {env: sandboxEnv(DEFAULT_SANDBOX, env), encoding: 'utf8'})
    expect(r.stdout.split('\n').filter((l) => /^[a-z]+=/.test(l))).toEqual(['s=fail', 'm=fail', 'c=fail', 'a=fail', 'st=ok'])
    // what helix sealed them with is harmless: an empty settings object, empty files
    expect(readFileSync(path.join(home, '.claude', 'settings.json'), 'utf8')).toBe('{}\n')
    for (const f of ['.claude/CLAUDE.md', '.codex/config.toml', '.codex/AGENTS.md']) expect(readFileSync(path.join(home, f), 'utf8')).toBe('')
    expect(readFileSync(path.join(home, '.claude', 'history.jsonl'), 'utf8')).toBe('x\n')
    // an existing file is never touched, and nothing is made where the state directory does not exist
    const home2 = path.join(base, 'home2')
    mkdirSync(path.join(home2, '.claude'), {recursive: true})
    writeFileSync(path.join(home2, '.claude', 'settings.json'), '{"model":"x"}')
    sandboxArgv(DEFAULT_SANDBOX, ['true'], {cwd: work, rw: [work], ro: [], env: {PATH: process.env.PATH, HOME: home2}})
    expect(readFileSync(path.join(home2, '.claude', 'settings.json'), 'utf8')).toBe('{"model":"x"}')
    expect(existsSync(path.join(home2, '.codex'))).toBe(false)
  })
})

describe('refusals and options', () => {
  it('a missing bwrap is one line naming the package', () => {
    const p = probeSandbox(DEFAULT_SANDBOX, {...process.env, HELIX_BWRAP: '/nonexistent/bwrap'})
    expect(p.ok).toBe(false)
    if (!p.ok) expect(p.message).toMatch(/apt-get install bubblewrap/)
  })

  it('status says a live run is sandboxed (SPEC 21.2)', () => {
    const p = {completed: 1, attempted: 2, max_cycles: null, tokens: 0, cost_usd: null, elapsed_s: 5, mean_cycle_s: null, last_cycle_s: null}
    expect(cyclesLine({...p, sandboxed: true})).toBe('1 completed of 2 attempted, sandboxed')
    expect(cyclesLine(p)).toBe('1 completed of 2 attempted')
  })

  it('reads the config lists and refuses a bad network value', () => {
    const config = parseConfig(JSON.stringify({sandbox: true, sandboxWritable: ['~/.cache/x'], sandboxEnv: ['FOO']}), 'c.json')
    expect(sandboxOptions({}, {HELIX_SANDBOX: '1'}, config)).toMatchObject({network: 'on', writable: ['~/.cache/x'], env: ['FOO']})
    expect(sandboxOptions({}, {}, {})).toBeNull()
    expect(() => sandboxOptions({sandbox: true, 'sandbox-network': 'off'}, {}, {})).toThrow(/--sandbox-network 'off': expected 'on' or 'none'/)
    expect(() => parseConfig(JSON.stringify({sandboxHidden: 'x'}), 'c.json')).toThrow(/sandboxHidden' must be a list/)
  })
})
