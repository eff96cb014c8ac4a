// Direct dispatch (src/cli/direct.ts): every command oclif would run is run from its
// direct bundle (dist/direct/), with oclif's parser and without the rest of oclif. It
// must pick the same command and hand it the same argv as oclif, and print, refuse and
// exit exactly as the oclif run does.
import {spawnSync} from 'node:child_process'
import {cpSync, mkdirSync, readFileSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {Config} from '@oclif/core'
import {normalizeArgv} from '@oclif/core/help'
import {describe, expect, it} from 'vitest'
import {directCommand, type DirectTable} from '../../src/cli/direct.js'
import type {Bead} from '../../src/tracker/types.js'
import {runCli} from '../support/cli.js'
import {BIN, helix, project, REAL_DDX, REPO, tempDir} from './helpers.js'
import {testEnv} from '../support/env.js'

const oclif = {HELIX_NO_FAST_PATH: '1'}

describe('direct dispatch (commands without oclif)', () => {
  it('finds the command and its argv exactly as oclif does, and leaves help, versions, topics and typos to oclif', async () => {
    const table = JSON.parse(readFileSync(path.join(REPO, 'dist', 'direct', 'commands.json'), 'utf8')) as DirectTable
    const config = await Config.load(REPO)
    expect(Object.keys(table).sort()).toEqual(config.commandIDs.slice().sort())
    const argvs = [
      [], ['next'], ['next', '--json'], ['tracker'], ['tracker', 'show', 'hx-1'], ['tracker', 'show'], ['tracker', 'show', '--json', 'hx-1'],
      ['tracker', 'dep', 'add', 'a', 'b'], ['tracker', 'dep'], ['tracker', 'dep', 'tree', 'x'], ['tracker', 'dep', 'add=1'], ['tracker', 'nope'],
      ['tracker', '', 'show', 'x'], ['tracker:show', 'x'], ['tracker:dep:add', 'a', 'b'], ['run', '--max-cycles', '1'], ['run', 'foo'],
      ['start', '--codex', 'x'], ['status', '3'], ['status', '--watch'], ['bogus'], ['bogus', 'x'], ['--version'], ['--help'], ['-x'],
      ['tracker', 'update', 'x', '--set', 'a=b'], ['tracker', 'update', 'x', '--help'], ['tracker', 'update', 'x', '--', '--help'],
      ['recover', 'x', 'y'], ['help'], ['help', 'status'], ['agent', 'check', 'codex'], ['agent'], ['tracker', 'list', 'a=b'], ['logs', '-f'],
      ['constructor'], ['__proto__', 'x'], ['tracker', 'constructor'], ['report', '--html'], ['version'],
    ]
    for (const argv of argvs) {
      const [id, ...rest] = normalizeArgv(config, [...argv])
      const oclifRuns = argv.length > 0 && argv[0] !== '--version' && !argv.slice(0, argv.indexOf('--') >>> 0).includes('--help') && id !== 'help' && Boolean(config.findCommand(id))
      expect({argv, got: directCommand(argv, table)}).toEqual({argv, got: oclifRuns ? {id, argv: rest} : null})
    }
  })

  it('prints, refuses and exits as the oclif run does', () => {
    const beads: Bead[] = [
      {id: 'hx-a', title: 'a <b>\u001b[31m', status: 'open', description: 'd', priority: 1},
      {id: 'hx-b', title: 'waits on a', status: 'open', dependencies: [{issue_id: 'hx-b', depends_on_id: 'hx-a', type: 'blocks'}]},
    ]
    const stamp = (t: string) => t.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>').replace(/hx-[0-9a-f]{8}\b/g, '<new id>')
    for (const args of [
      ['next', '--json'],
      ['tracker', 'list', '--json'],
      ['tracker', 'dep', 'tree', 'hx-b'],
      ['tracker', 'update', 'hx-a', '--append-notes', 'more', '--json'],
      ['tracker', 'update', 'hx-a', '--priority', 'x'],
      ['tracker', 'update', 'hx-a', '--bogus'],
      ['tracker', 'update'],
      ['tracker', 'create', 'a new one', '--labels', 'x,y', '--json'],
      ['tracker:show', 'hx-b', 'extra'],
      ['stop'],
      ['run', '--max-cycles', 'soon'],
      ['tracker', 'show', 'hx-a', '--help'],
      ['tracker', 'nope'],
    ]) {
      // each side gets a fresh project: some of these change the tracker
      const direct = helix(project({beads}), args)
      const viaOclif = helix(project({beads}), args, oclif)
      expect({args, code: direct.code, out: stamp(direct.stdout), err: stamp(direct.stderr)}).toEqual({args, code: viaOclif.code, out: stamp(viaOclif.stdout), err: stamp(viaOclif.stderr)})
    }
  })

  it('a reader that goes away (| head) ends the output quietly, as through oclif', () => {
    // ~1.5 MB of JSON, far more than a pipe holds: the writes after `head` exits fail with EPIPE
    const root = project({copy: REAL_DDX})
    const viaShell = (extra: string) =>
      spawnSync('bash', ['-c', `${extra} "${process.execPath}" "${BIN}" tracker list --json 2>err | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"; cat err`], {cwd: root, env: testEnv(), encoding: 'utf8'}).stdout
    const direct = viaShell('')
    expect(direct).toBe(viaShell('HELIX_NO_FAST_PATH=1'))
    expect(direct).not.toMatch(/EPIPE|Error/)
  })

  it('runs a command with none of oclif’s own command files installed', () => {
    // an install whose dist/commands/ (what oclif loads) is gone: only the direct bundles can answer
    const install = tempDir('helix-direct-')
    for (const f of ['bin', 'package.json', 'oclif.manifest.json', 'workflows']) cpSync(path.join(REPO, f), path.join(install, f), {recursive: true})
    cpSync(path.join(REPO, 'dist'), path.join(install, 'dist'), {recursive: true, filter: (src) => !src.startsWith(path.join(REPO, 'dist', 'commands'))})
    symlinkSync(path.join(REPO, 'node_modules'), path.join(install, 'node_modules'))
    mkdirSync(path.join(install, 'dist', 'commands'))
    const root = project({beads: [{id: 'hx-a', title: 'a', status: 'open'}]})
    const bin = path.join(install, 'bin', 'run.js')
    const update = runCli(['tracker', 'update', 'hx-a', '--append-notes', 'noted'], {cwd: root, bin})
    expect({code: update.code, out: update.stdout, err: update.stderr}).toEqual({code: 0, out: 'updated hx-a\n', err: ''})
    expect(runCli(['tracker', 'show', 'hx-a', '--json'], {cwd: root, bin}).stdout).toContain('noted')
    // the same command through oclif fails in this install: it has nothing to load
    const viaOclif = runCli(['tracker', 'update', 'hx-a', '--append-notes', 'again'], {cwd: root, bin, env: oclif})
    expect(viaOclif.code).not.toBe(0)
    expect(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8')).not.toContain('again')
  })
})
