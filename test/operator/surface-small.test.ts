/**
 * 16.6 small things, each command in-process (test/support/in-process.ts): doctor takes
 * run's agent flags, logs --lines. Unknown commands and the help text go through the
 * built CLI: surface-small.e2e.test.ts.
 */
import {chmodSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {project} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

/** a temp dir, removed after the test (test/support/tmp.ts) */
const temp = (prefix = 'helix-surface-'): string => makeTempDir(prefix)
const proj = (beads: object[]): string => project({beads: beads as never})

describe('16.6 small things', () => {
  it('doctor takes the agent flags of run and checks that agent', async () => {
    const root = proj([])
    const bin = temp('helix-bin-')
    const agent = path.join(bin, 'myagent')
    writeFileSync(agent, '#!/bin/sh\nexit 0\n')
    chmodSync(agent, 0o755)
    const env = {PATH: `${bin}:/usr/bin:/bin`}
    const ok = await helix(root, ['doctor', '--agent', agent, '--model', 'm', '--effort', 'high', '--timeout', '60'], env)
    expect(ok.stdout).toMatch(new RegExp(`^ok {4}implementation agent ${agent.replaceAll('/', '\\/')}: ${agent.replaceAll('/', '\\/')}$`, 'm'))
    const byName = await helix(root, ['doctor', '--agent', 'myagent'], env)
    expect(byName.stdout).toMatch(/^ok {4}implementation agent myagent: /m)
    const claude = await helix(root, ['doctor', '--claude'], env)
    expect(claude.code).toBe(1)
    expect(claude.stdout).toMatch(/^FAIL  implementation agent claude: not found on PATH$/m)
    const review = await helix(root, ['doctor', '--agent', 'myagent', '--review-agent', '/nonexistent/reviewer'], env)
    expect(review.code).toBe(1)
    expect(review.stdout).toMatch(/^FAIL  review agent \/nonexistent\/reviewer: not an executable file$/m)
    // agent names from flags and env are untrusted text on the terminal
    const evil = await helix(root, ['doctor', '--agent', 'ag\u001b]0;x\u0007\u202e'], {...env, HELIX_REVIEW_AGENT: 'rv\u001b[2J'})
    expect(evil.code).toBe(1)
    expect(evil.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/)
    expect(evil.stdout).toMatch(/^FAIL  implementation agent ag\?\]0;x\?\?: not found on PATH$/m)
    expect(evil.stdout).toMatch(/^FAIL  review agent rv\?\[2J: not found on PATH$/m)
    const both = await helix(root, ['doctor', '--claude', '--codex'], env)
    expect(both.code).toBe(1)
    expect(both.stdout).toMatch(/^FAIL  agent flags: --claude and --codex cannot be used together$/m)
    // a value run would refuse is refused here too: one line, exit 1
    const bad = await helix(root, ['doctor', '--timeout', 'abc'], env)
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([1, '', "helix: invalid --timeout 'abc' (expected a positive number of seconds)\n"])
  })

  it('logs --lines A-B prints exactly those records with their line numbers; bad ranges are one line', async () => {
    const root = proj([])
    const logDir = path.join(root, '.helix-logs')
    mkdirSync(logDir)
    const t = Date.parse('2026-11-23T04:10:00Z')
    const recs = [
      {level: 30, time: t, msg: 'run start'},
      {level: 30, time: t + 1000, msg: 'dispatch', dispatch: 1, action: 'implementation', agent: 'codex'},
      {level: 30, time: t + 2000, msg: 'editing a.ts\u001b]0;x\u0007', stream: 'agent', dispatch: 1},
      {level: 30, time: t + 3000, msg: 'second line', stream: 'agent', dispatch: 1},
      {level: 30, time: t + 4000, msg: 'dispatch end', dispatch: 1, rc: 0, duration_ms: 3000},
      {level: 30, time: t + 5000, msg: 'run stop'},
    ]
    const file = path.join(logDir, 'helix-20261123-041000.log')
    writeFileSync(file, recs.map((r) => JSON.stringify(r)).join('\n') + '\n')
    // one spelling here; parseLinePointer's unit test (logs-slots.test.ts) takes all of them
    for (const spec of ['L2–L4']) {
      const r = await helix(root, ['logs', '--lines', spec, file])
      expect(r.code, spec).toBe(0)
      expect(r.stderr).toBe('')
      const lines = r.stdout.trimEnd().split('\n')
      expect(lines).toHaveLength(3)
      expect(lines[0]).toMatch(/^L2 +\d\d:\d\d:\d\d INFO  dispatch #1: implementation via codex$/)
      expect(lines[1]).toBe('L3  ' + '           │ editing a.ts?]0;x?')
      expect(lines[2]).toBe('L4  ' + '           │ second line')
    }
    // the newest log is the default file
    expect((await helix(root, ['logs', '--lines', 'L6'])).stdout).toMatch(/^L6 +\d\d:\d\d:\d\d INFO  run stop\n$/)
    // past the end: what exists, then one line saying so
    const past = await helix(root, ['logs', '--lines', '5-9', file])
    expect(past.code).toBe(1)
    expect(past.stdout.trimEnd().split('\n').map((l) => l.split(' ')[0])).toEqual(['L5', 'L6'])
    expect(past.stderr).toMatch(/^helix: .*helix-20261123-041000\.log has only 6 lines; printed L5–L6\n$/)
    // one bad range end to end; the other messages: logs-slots.test.ts
    for (const [spec, msg] of [['4-2', "helix: invalid --lines '4-2': the range ends before it starts\n"]]) {
      const r = await helix(root, ['logs', '--lines', spec, file])
      expect(r.code).toBe(1)
      expect(r.stderr).toBe(msg)
      expect(r.stdout).toBe('')
    }
    expect((await helix(root, ['logs', '--lines', '1-2', '--follow'])).stderr).toBe('helix: --lines and --follow cannot be combined\n')
  })
})
