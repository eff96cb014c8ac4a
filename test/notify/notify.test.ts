import {chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createNotifier, notifyArgv, validateNotify} from '../../src/output/notify.js'
import {pidAlive} from '../../src/state/pidfile.js'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'

let dir: string
let bin: string
let env: NodeJS.ProcessEnv
const pids: number[] = []

beforeEach(() => {
  dir = makeTempDir('helix-notify-')
  bin = path.join(dir, 'bin')
  mkdirSync(bin)
  env = {...process.env, PATH: `${bin}:${process.env.PATH}`, OUT: path.join(dir, 'out')}
})

afterEach(() => {
  for (const p of pids.splice(0)) {
    try {
      process.kill(p, 'SIGKILL')
    } catch {
      // gone
    }
  }
  rmSync(dir, {recursive: true, force: true})
})

function script(name: string, body: string): string {
  const file = path.join(bin, name)
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}

describe('validateNotify', () => {
  it('splits on spaces and resolves the command on PATH', () => {
    const file = script('my-notify', 'exit 0')
    expect(notifyArgv('  my-notify  --to  ops ')).toEqual(['my-notify', '--to', 'ops'])
    expect(validateNotify('my-notify --to ops', env)).toEqual([file, '--to', 'ops'])
  })

  it('accepts an executable path, relative to cwd', () => {
    const file = script('n.sh', 'exit 0')
    expect(validateNotify('bin/n.sh', env, dir)).toEqual([file])
  })

  it.each([
    ['no-such-notifier-xyz', 'no-such-notifier-xyz'],
    ['./missing.sh arg', './missing.sh'],
    ['   ', '(empty)'],
  ])('refuses %j in one line', (cmd, shown) => {
    expect(() => validateNotify(cmd, env, dir)).toThrow(`helix: --notify: ${shown}: not an executable file or command on PATH`)
  })

  it('refuses a file that is not executable, and sanitizes the name', () => {
    writeFileSync(path.join(dir, 'plain'), 'x')
    expect(() => validateNotify('./plain', env, dir)).toThrow(/not an executable file/)
    expect(() => validateNotify('x\u001b[2J', env, dir)).toThrow('helix: --notify: x?[2J: not an executable file or command on PATH')
  })
})

describe('createNotifier', () => {
  it('passes one JSON line on stdin and the argv words, with no shell in between', async () => {
    script('rec', 'printf "%s|" "$#" "$@" >> "$OUT.args"; cat >> "$OUT"')
    const n = createNotifier('rec --x $(touch-pwned) ;', {env})
    const event = {event: 'bead_blocked', bead: 'hx-1', title: 'evil $(touch pwned) `id` ; rm -rf / \u001b[2J', n: 1}
    await n.send(event)
    const text = readFileSync(path.join(dir, 'out'), 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    expect(text.split('\n')).toHaveLength(2)
    expect(JSON.parse(text)).toEqual(event)
    expect(readFileSync(path.join(dir, 'out.args'), 'utf8')).toBe('3|--x|$(touch-pwned)|;|')
    expect(existsSync(path.join(dir, 'pwned'))).toBe(false)
  })

  it('sends events in the order they were sent', async () => {
    script('rec', 'cat >> "$OUT"')
    const n = createNotifier('rec', {env})
    await Promise.all([n.send({i: 1}), n.send({i: 2}), n.send({i: 3})])
    expect(readFileSync(path.join(dir, 'out'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).i)).toEqual([1, 2, 3])
  })

  it('logs a failing notifier and resolves', async () => {
    script('fail', 'echo "smtp down \u001b[31m" >&2; exit 3')
    const logs: string[] = []
    await expect(createNotifier('fail', {env, log: (l) => logs.push(l)}).send({event: 'paused'})).resolves.toBeUndefined()
    expect(logs).toEqual(['helix: --notify fail failed (exit 3): smtp down ?[31m'])
  })

  it('a notifier that does not read stdin is fine', async () => {
    script('noread', 'exit 0')
    const logs: string[] = []
    await createNotifier('noread', {env, log: (l) => logs.push(l)}).send({event: 'resumed', pad: 'x'.repeat(1_000_000)})
    expect(logs).toEqual([])
  })

  it('kills a hanging notifier and its group after the bound, and logs it', async () => {
    script('hang', 'sleep 300 & echo $! > "$OUT.kid"; wait')
    const logs: string[] = []
    const t0 = Date.now()
    const n = createNotifier('hang', {env, log: (l) => logs.push(l), timeoutMs: 400})
    const sent = n.send({event: 'run_stopped'})
    await waitFor(() => existsSync(path.join(dir, 'out.kid')) && readFileSync(path.join(dir, 'out.kid'), 'utf8').trim() !== '')
    const kid = Number(readFileSync(path.join(dir, 'out.kid'), 'utf8').trim())
    pids.push(kid)
    await sent
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(logs).toEqual(['helix: --notify hang took more than 0 s; killed'])
    await waitFor(() => !pidAlive(kid))
  })

  it('a notifier removed after start only logs', async () => {
    const file = script('gone', 'exit 0')
    const logs: string[] = []
    const n = createNotifier('gone', {env, log: (l) => logs.push(l)})
    rmSync(file)
    await n.send({event: 'agent_unavailable'})
    expect(logs).toHaveLength(1)
    expect(logs[0]).toMatch(/^helix: --notify gone failed: /)
  })
})
