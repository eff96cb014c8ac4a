import {spawnSync} from 'node:child_process'
import {chmodSync, rmSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {claudeWouldRefuse, probeAgents, runVersion} from '../../src/agents/doctor-probe.js'
import {isAlive, stubProject, type StubEnv} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'

// helix doctor's agent probes (SPEC 14.6), against stub agents and small scripts (real processes).

const dirs: string[] = []
const projects: StubEnv[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
  for (const p of projects.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

function script(name: string, body: string): string {
  const dir = makeTempDir('helix-probe-')
  dirs.push(dir)
  const file = path.join(dir, name)
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}

describe('agent probes', () => {
  it('claude would refuse only as uid 0 without IS_SANDBOX=1', () => {
    expect(claudeWouldRefuse(0, {})).toBe(true)
    expect(claudeWouldRefuse(0, {IS_SANDBOX: '1'})).toBe(false)
    expect(claudeWouldRefuse(1000, {})).toBe(false)
  })

  it('ok with the version; claude as root refusing with the fix; a missing agent; no call recorded', async () => {
    const p = stubProject()
    projects.push(p)
    const env = {...p.env, HELIX_AGENT: 'claude', HELIX_REVIEW_AGENT: 'no-such-agent-xyz'}
    const probes = await probeAgents({env, root: p.root, uid: 0})
    const by = Object.fromEntries(probes.map((x) => [x.name, x]))
    expect(by.claude).toMatchObject({role: 'implementation agent', required: true, status: 'refusing', version: '0.0.0 (Claude Code stub)'})
    expect(by.claude.fix).toBe('run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust')
    expect(by.codex).toMatchObject({status: 'ok', version: 'codex-cli 0.0.0-stub', required: false})
    expect(by['no-such-agent-xyz']).toMatchObject({status: 'missing', required: true, role: 'review agent'})
    const sandboxed = await probeAgents({env: {...env, IS_SANDBOX: '1'}, root: p.root, uid: 0})
    expect(sandboxed.find((x) => x.name === 'claude')!.status).toBe('ok')
    expect(p.calls()).toEqual([])
  })

  it('a --version that fails or hangs is broken, bounded, and its process is killed', async () => {
    const bad = script('codex', 'echo "boom: missing lib" >&2; exit 3')
    expect(await runVersion(bad, 2000)).toEqual({ok: false, line: '--version exited 3: boom: missing lib'})
    const pidFile = path.join(path.dirname(bad), 'pid')
    const hang = script('claude', `echo $$ > ${pidFile}; exec sleep 60`)
    const t0 = Date.now()
    const r = await runVersion(hang, 300)
    expect(r).toEqual({ok: false, line: '--version did not answer within 0.3s'})
    expect(Date.now() - t0).toBeLessThan(3000)
    const pid = Number(spawnSync('cat', [pidFile], {encoding: 'utf8'}).stdout.trim())
    await waitFor(() => !isAlive(pid), {timeoutMs: 2000, what: `the hung --version probe (pid ${pid}) to be killed`})
    const probes = await probeAgents({env: {PATH: path.dirname(bad), HELIX_AGENT: 'codex'}, root: os.tmpdir(), uid: 1000, timeoutMs: 300})
    expect(probes.find((x) => x.name === 'codex')).toMatchObject({status: 'broken', required: true})
  })

  it('run flags win over the environment', async () => {
    const p = stubProject()
    projects.push(p)
    const probes = await probeAgents({env: {...p.env, HELIX_AGENT: 'codex'}, root: p.root, uid: 1000, flags: {claude: true, reviewAgent: 'codex'}})
    expect(probes.map((x) => [x.name, x.role])).toEqual([
      ['claude', 'implementation agent'],
      ['codex', 'review agent'],
    ])
  })

  it('the version comes from stdout, past notices on stderr (codex 0.169.0 warns when HOME is under /tmp)', async () => {
    const v = script('codex', 'echo "WARNING: proceeding, even though we could not create PATH aliases" >&2; echo "codex-cli 0.169.0"')
    expect(await runVersion(v, 2000)).toEqual({ok: true, line: 'codex-cli 0.169.0'})
  })

  it('a command agent is not run, only checked', async () => {
    const marker = path.join(os.tmpdir(), `helix-probe-ran-${process.pid}`)
    const agent = script('my-agent', `touch ${marker}`)
    const probes = await probeAgents({env: {PATH: '/nonexistent', HELIX_AGENT: agent}, root: '/', uid: 1000})
    expect(probes[0]).toMatchObject({name: agent, status: 'ok'})
    expect(spawnSync('test', ['-e', marker]).status).toBe(1)
  })
})
