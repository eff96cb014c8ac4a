import {spawnSync} from 'node:child_process'
import {lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync, existsSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {BIN} from '../support/cli.js'

const REPO = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..'))
const SCRIPT = path.join(REPO, 'scripts', 'install.sh')
const ENTRY = BIN

const temps: string[] = []
function temp(): string {
  const dir = makeTempDir('helix-install-')
  temps.push(dir)
  return dir
}
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, {recursive: true, force: true})
})

function install(args: string[], env: Record<string, string | undefined>) {
  const clean: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'PREFIX') clean[k] = v
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete clean[k]
    else clean[k] = v
  }
  const r = spawnSync('bash', [SCRIPT, ...args], {env: clean, encoding: 'utf8'})
  return {rc: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe('scripts/install.sh', () => {
  it('links helix into ~/.local/bin, is idempotent, and uninstalls', () => {
    const home = temp()
    const target = path.join(home, '.local', 'bin', 'helix')

    const first = install([], {HOME: home})
    expect(first.rc).toBe(0)
    expect(first.stdout).toContain(`installed ${target} -> ${ENTRY}`)
    expect(lstatSync(target).isSymbolicLink()).toBe(true)
    expect(readlinkSync(target)).toBe(ENTRY)

    const again = install([], {HOME: home})
    expect(again.rc).toBe(0)
    expect(again.stdout).toContain('already installed')
    expect(readlinkSync(target)).toBe(ENTRY)

    const gone = install(['--uninstall'], {HOME: home})
    expect(gone.rc).toBe(0)
    expect(gone.stdout).toContain(`removed ${target}`)
    expect(existsSync(target)).toBe(false)

    const twice = install(['--uninstall'], {HOME: home})
    expect(twice.rc).toBe(0)
    expect(twice.stdout).toContain('nothing to remove')
  })

  it('honours PREFIX and --prefix, and tells you when the bin dir is not on PATH', () => {
    const prefix = temp()
    const viaEnv = install([], {PREFIX: prefix, HOME: temp(), PATH: '/usr/bin:/bin'})
    expect(viaEnv.rc).toBe(0)
    expect(readlinkSync(path.join(prefix, 'bin', 'helix'))).toBe(ENTRY)
    expect(viaEnv.stderr).toContain(`${path.join(prefix, 'bin')} is not on your PATH`)

    const other = temp()
    const viaFlag = install(['--prefix', other], {HOME: temp(), PATH: `${path.join(other, 'bin')}:/usr/bin:/bin`})
    expect(viaFlag.rc).toBe(0)
    expect(readlinkSync(path.join(other, 'bin', 'helix'))).toBe(ENTRY)
    expect(viaFlag.stderr).not.toContain('is not on your PATH')
  })

  it('the installed link runs helix', () => {
    const prefix = temp()
    expect(install(['--prefix', prefix], {HOME: temp()}).rc).toBe(0)
    const r = spawnSync(path.join(prefix, 'bin', 'helix'), ['--version'], {
      encoding: 'utf8',
      env: {...process.env, NODE_ENV: 'production'},
    })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('helix-cli/')
  })

  it('never replaces a helix it did not create', () => {
    const prefix = temp()
    const target = path.join(prefix, 'bin', 'helix')
    mkdirSync(path.dirname(target), {recursive: true})
    writeFileSync(target, '#!/bin/sh\necho mine\n')

    const r = install(['--prefix', prefix], {HOME: temp()})
    expect(r.rc).toBe(1)
    expect(r.stderr).toContain('already exists and is not a link')
    expect(readFileSync(target, 'utf8')).toBe('#!/bin/sh\necho mine\n')

    const u = install(['--prefix', prefix, '--uninstall'], {HOME: temp()})
    expect(u.rc).toBe(1)
    expect(readFileSync(target, 'utf8')).toBe('#!/bin/sh\necho mine\n')
  })

  it('rejects unknown options with one line and exit 1', () => {
    const r = install(['--frobnicate'], {HOME: temp()})
    expect(r.rc).toBe(1)
    expect(r.stderr.trim().split('\n')).toEqual(["install.sh: unknown option '--frobnicate' (try --help)"])
  })
})
