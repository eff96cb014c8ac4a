import {appendFileSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {renderLogLine, renderLogText} from '../../src/output/log-render.js'
import {newestSessionLog} from '../../src/output/log-lookup.js'
import {LogTail} from '../../src/output/log-follow.js'
import {openSessionLog} from '../../src/output/session-log.js'
import {helixInProcess as helix} from '../support/in-process.js'
import {project} from './helpers.js'

// session logs rendered, found and tailed, and `helix logs` in-process (test/support/in-process.ts);
// --follow until SIGINT: logs.e2e.test.ts

describe('log rendering', () => {
  it('renders helix events, dispatches and indented agent lines from a real session log', async () => {
    const root = project()
    const logDir = path.join(root, '.helix-logs')
    const log = await openSessionLog(logDir, new Date(2026, 10, 22, 4, 0, 0))
    log.event('run start', {agent: 'codex'})
    log.event('dispatch', {dispatch: 1, action: 'implementation', agent: 'codex', argv: ['codex', 'exec']})
    log.agentLine('working on it %s', {dispatch: 1})
    log.agentLine('\u001b[31mred\u001b[0m done', {dispatch: 1})
    log.event('dispatch end', {dispatch: 1, rc: 0, tokens: 1234, duration_ms: 6100, timed_out: false})
    log.event('claim lost', {bead: 'hx-1'}, 'warn')
    log.close()
    const r = await helix(root, ['logs'])
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(6)
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d INFO  run start  agent=codex$/)
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d INFO  dispatch #1: implementation via codex  argv=\["codex","exec"\]$/)
    expect(lines[2]).toBe('           │ working on it %s')
    expect(lines[3]).toBe('           │ ?[31mred?[0m done')
    expect(lines[4]).toMatch(/dispatch #1 end: rc=0, 1,234 tokens, 6\.1s$/)
    expect(lines[5]).toMatch(/^\d\d:\d\d:\d\d WARN  claim lost  bead=hx-1$/)
    // an explicit file name (relative to .helix-logs) works too; missing ones are one line, exit 1
    expect((await helix(root, ['logs', path.basename(log.path)])).stdout).toBe(r.stdout)
    const missing = await helix(root, ['logs', 'nope.log'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe('helix: log file not found: nope.log\n')
  })

  it('no logs: one line, exit 1, and no log file created', async () => {
    const root = project()
    const r = await helix(root, ['logs'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: no session logs in ${path.join(root, '.helix-logs')}\n`)
  })

  it('non-JSON lines pass through; blank lines vanish', async () => {
    expect(renderLogLine('plain text')).toBe('plain text')
    expect(renderLogLine('   ')).toBeNull()
    expect(renderLogText('{"level":50,"time":0,"msg":"boom","dispatch":2}\n\nraw\n')).toMatch(/ERROR \[#2\] boom\nraw\n$/)
  })

  it('newest session log by name; start-*.log files are not session logs', async () => {
    const root = project()
    const dir = path.join(root, '.helix-logs')
    mkdirSync(dir)
    for (const n of ['helix-20260101-000000.log', 'helix-20260102-000000.log', 'start-20270101-000000.log']) writeFileSync(path.join(dir, n), '')
    expect(newestSessionLog(dir)).toBe(path.join(dir, 'helix-20260102-000000.log'))
  })

  it('LogTail returns only complete lines, across split writes and multibyte characters', async () => {
    const root = project()
    const f = path.join(root, 'x.log')
    writeFileSync(f, 'one\ntw')
    const t = new LogTail(f)
    expect(t.readNew()).toEqual(['one'])
    appendFileSync(f, 'o ')
    appendFileSync(f, Buffer.from('é', 'utf8').subarray(0, 1))
    expect(t.readNew()).toEqual([])
    appendFileSync(f, Buffer.concat([Buffer.from('é', 'utf8').subarray(1), Buffer.from('\n')]))
    expect(t.readNew()).toEqual(['two é'])
  })
})

describe('long fields', () => {
  it('multi-line or very long field values are summarised, not dumped', async () => {
    const line = renderLogLine(JSON.stringify({level: 20, time: 0, msg: 'prompt', dispatch: 1, prompt: 'a\nb\nc', big: 'x'.repeat(500), arr: Array.from({length: 100}, (_, i) => i)}))!
    expect(line).toContain('prompt=<5 chars, 3 lines>')
    expect(line).toContain('big=<500 chars>')
    expect(line).toMatch(/arr=\[0,1,2,.*…/)
    expect(line.length).toBeLessThan(400)
  })
})

describe('colour', () => {
  it('only when asked: warn yellow, error red, agent dim; record text cannot inject codes', async () => {
    const warn = JSON.stringify({level: 40, time: 0, msg: 'careful \u001b[32m'})
    expect(renderLogLine(warn)).not.toContain('\u001b')
    const c = renderLogLine(warn, {color: true})!
    expect(c.startsWith('\u001b[33m')).toBe(true)
    expect(c.endsWith('\u001b[0m')).toBe(true)
    expect(c.slice(5, -4)).not.toContain('\u001b')
    expect(renderLogLine(JSON.stringify({level: 50, time: 0, msg: 'x'}), {color: true})!.startsWith('\u001b[31m')).toBe(true)
    expect(renderLogLine(JSON.stringify({msg: 'out', stream: 'agent', dispatch: 1}), {color: true})).toBe('\u001b[2m           │ out\u001b[0m')
    expect(renderLogLine(JSON.stringify({level: 30, time: 0, msg: 'plain'}), {color: true})).not.toContain('\u001b')
  })
})
