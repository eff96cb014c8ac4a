/**
 * The way into a command (bin/run.js: the fast path, else oclif) as the operator meets it
 * (SPEC 22.2): typos get a did-you-mean, `-h` is `--help`, an extra argument is called
 * one, a reader that goes away ends the output quietly with exit 0, and a bug is one
 * `internal error` line with its stack kept in a file — the same on both ways in.
 */
import {readFileSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {pathToFileURL} from 'node:url'
import {BIN, runCli, startCli} from '../support/cli.js'
import {helixInProcess} from '../support/in-process.js'
import {helix, project, tempDir} from './helpers.js'

const BEADS = [{id: 'hx-1', title: 'one', status: 'open'}]
const OCLIF = {HELIX_NO_FAST_PATH: '1'}

describe('typos and help (SPEC 22.2)', () => {
  it('an unknown flag names the closest one; an unknown subcommand the closest command, without its arguments; nothing is written', async () => {
    const dir = project({beads: BEADS})
    const before = readdirSync(dir)
    const cases: Array<[string[], string]> = [
      [['run', '--wokers', '2'], 'helix: Nonexistent flag: --wokers (did you mean --workers?)\n'],
      [['status', '--wacth'], 'helix: Nonexistent flag: --wacth (did you mean --watch?)\n'],
      [['tracker', 'shwo', 'hx-1'], "helix: unknown command 'tracker shwo' (did you mean 'tracker show'?)\n"],
      [['run', 'extra-arg'], "helix run: unexpected argument 'extra-arg'\n"],
      [['tracker', 'show', 'hx-1', 'extra'], "helix tracker show: unexpected argument 'extra'\n"],
    ]
    // through the real entry: an unknown subcommand (oclif's lookup fails) and a stray word
    // (oclif must not take `run extra-arg` for a command of that name); the command's own
    // refusals of a flag or an argument also in-process, without a CLI start each
    const spawned = new Set(['tracker shwo hx-1', 'run extra-arg'])
    for (const [args, line] of cases) {
      const r = spawned.has(args.join(' ')) ? helix(dir, args) : await helixInProcess(dir, args)
      expect({args, code: r.code, stdout: r.stdout, stderr: r.stderr}).toEqual({args, code: 1, stdout: '', stderr: line})
    }
    expect(readdirSync(dir)).toEqual(before)
  })

  it('-h is --help, for the program, a topic and any command (fast-path shapes included)', () => {
    const dir = tempDir()
    for (const args of [['-h'], ['run', '-h'], ['tracker', 'show', 'hx-1', '-h'], ['status', '-h'], ['tracker', '-h']]) {
      const short = helix(dir, args)
      const long = helix(dir, args.map((a) => (a === '-h' ? '--help' : a)))
      expect({args, code: short.code, stderr: short.stderr}).toEqual({args, code: 0, stderr: ''})
      expect(short.stdout).toMatch(/USAGE|COMMANDS/)
      expect(short.stdout).toBe(long.stdout)
    }
  })
})

describe('a reader that goes away (| head): exit 0, nothing on stderr, on every way in', () => {
  // The read end is closed before the CLI has even started, so its first write fails
  // with EPIPE, as `| head -c0` does (`| head -1` does the same, one write later).
  async function cutShort(args: string[], cwd: string, env: Record<string, string> = {}) {
    const c = startCli(args, {cwd, env, stdin: 'ignore'})
    c.child.stdout.destroy()
    const r = await c.done
    return {args, code: r.code, signal: r.signal, stderr: r.stderr}
  }

  it.each([
    ['the fast path', ['status', '--json'], {}],
    ['the fast path (an agent reading a bead)', ['tracker', 'show', 'hx-1'], {}],
    ['an oclif command', ['tracker', 'list', '--json'], {}],
    ['an oclif command, fast-path shape forced through oclif', ['status', '--json'], OCLIF],
    ['help', ['--help'], {}],
    ['a command help', ['run', '-h'], {}],
    ['--version', ['--version'], {}],
  ])('%s: %j', async (_what, args, env) => {
    const dir = project({beads: Array.from({length: 400}, (_, i) => ({id: `hx-${i + 1}`, title: `bead ${i} ${'x'.repeat(200)}`, status: 'open'}))})
    expect(await cutShort(args, dir, env)).toEqual({args, code: 0, signal: null, stderr: ''})
  })
})

describe('a bug at the command boundary (not the operator\'s fault)', () => {
  it('is one internal-error line, exit 1, with the stack kept in .helix-logs/, on the fast path and through oclif alike', () => {
    const dir = project({beads: BEADS})
    // a fault injected into the CLI's own process: looking up this one id throws a TypeError
    const preload = path.join(tempDir(), 'bug.cjs')
    writeFileSync(
      preload,
      `const get = Map.prototype.get
Map.prototype.get = function (key) {
  if (key === 'hx-boom') throw new TypeError("Cannot read properties of undefined (reading 'boom')")
  return get.call(this, key)
}
`,
    )
    const inject = {NODE_OPTIONS: `--require ${preload}`}
    for (const env of [inject, {...inject, ...OCLIF}]) {
      const r = helix(dir, ['tracker', 'show', 'hx-boom'], env)
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      const m = /^helix: internal error: Cannot read properties of undefined \(reading 'boom'\) \(a bug in helix; the stack is in (.+\/\.helix-logs\/internal-error-\d{8}-\d{6}-\d+\.log)\)\n$/.exec(r.stderr)
      expect(m, r.stderr).not.toBeNull()
      expect(path.dirname(m![1])).toBe(path.join(dir, '.helix-logs'))
      const kept = readFileSync(m![1], 'utf8')
      expect(kept).toContain('argv: ["tracker","show","hx-boom"]')
      expect(kept).toMatch(/TypeError: Cannot read properties of undefined \(reading 'boom'\)\n\s+at Map\.get .*\n\s+at .*trackerShowOutput/)
    }
    expect(readdirSync(path.join(dir, '.helix-logs'))).toHaveLength(2)
  })
})

describe('a working directory deleted under the shell', () => {
  it('is one line and exit 1, not an internal error; help and --version still answer', () => {
    const dir = tempDir()
    const gone = path.join(dir, 'gone')
    // the process starts in `gone`, which is removed before helix's entry runs
    const wrapper = path.join(dir, 'in-deleted-cwd.mjs')
    writeFileSync(
      wrapper,
      `import {mkdirSync, rmdirSync} from 'node:fs'\nmkdirSync(${JSON.stringify(gone)})\nprocess.chdir(${JSON.stringify(gone)})\nrmdirSync(${JSON.stringify(gone)})\nawait import(${JSON.stringify(pathToFileURL(BIN).href)})\n`,
    )
    for (const args of [['tracker', 'list'], ['status']]) {
      const r = runCli(args, {cwd: dir, bin: wrapper})
      expect({args, code: r.code, stdout: r.stdout, stderr: r.stderr}).toEqual({
        args,
        code: 1,
        stdout: '',
        stderr: 'helix: the current directory no longer exists (deleted or moved); cd into the project and run the command again\n',
      })
    }
    const v = runCli(['--version'], {cwd: dir, bin: wrapper})
    expect(v.code).toBe(0)
    expect(v.stdout).toMatch(/^helix-cli\//)
    expect(readdirSync(dir)).toEqual(['in-deleted-cwd.mjs'])
  })
})
