import {existsSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {spawn} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {beads, calls, helix, helixIn, implOrder, project, runState, writeExecutable} from './e2e-helpers.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import {helixInProcess} from '../support/in-process.js'

// helix run, part 3 of 3: gates, the run mutex, --dry-run, helix build, bad flags. In the test's own
// process (src/; the stub agents are real processes and close their beads through the built CLI),
// except one refused flag whose exit code the shell sees. SIGTERM during an agent call: signals.e2e.

const NO_REVIEW = ['--no-auto-review']

describe('helix run end to end (built CLI, stub agents)', () => {
  it('acceptance gate files a de-duplicated failure bead', async () => {
    const p = project([{id: 'hx-g1'}], {check: ['next:WAIT']})
    writeExecutable(path.join(p.root, 'scripts', 'check-acceptance-demo.sh'), '#!/bin/sh\necho failing\nexit 1\n')
    writeExecutable(path.join(p.root, 'scripts', 'check-acceptance-ok.sh'), '#!/bin/sh\nexit 0\n')
    const r = await helixIn(p, ['run', ...NO_REVIEW])
    expect(r.stderr).toContain('helix: acceptance criteria not met after cycle 1 — failures filed as tracker issues')
    const filed = [...beads(p).values()].filter((b) => String(b.title).startsWith('Acceptance failure:'))
    expect(filed[0]).toMatchObject({title: 'Acceptance failure: check-acceptance-demo.sh after hx-g1', labels: ['helix', 'acceptance-failure'], 'spec-id': 'check-acceptance-demo.sh', acceptance: 'check-acceptance-demo.sh passes cleanly'})
    expect(filed).toHaveLength(1)
  })

  it('mutex: a live holder → exit 2, tracker untouched, denied count incremented', async () => {
    const sleeper = trackProcess(spawn('sleep', ['60'], {stdio: 'ignore'}))
    try {
      const p = project([{id: 'hx-m'}])
      // the holder's recorded start must not predate its process (a pid reused
      // by a later process is not a live run: see the next test)
      const started = new Date().toISOString()
      writeFileSync(path.join(p.root, '.ddx', 'helix.pid'), `${sleeper.pid} ${started}\n`)
      const before = readFileSync(p.tracker, 'utf8')
      const r = await helixIn(p, ['run'])
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(`helix run: already running (pid=${sleeper.pid}, started=${started})\n`)
      expect(readFileSync(p.tracker, 'utf8')).toBe(before)
      expect(runState(p).parallel_run_denied_count).toBe(1)
      expect(calls(p)).toEqual([])
      // a dead holder's file is replaced
      writeFileSync(path.join(p.root, '.ddx', 'helix.pid'), `999999 2026-01-01T00:00:00.000Z\n`)
      const ok = await helixIn(p, ['run', ...NO_REVIEW, '--max-cycles', '1'])
      expect(ok.code).toBe(0)
      expect(runState(p).parallel_run_denied_count).toBe(1)
    } finally {
      sleeper.kill('SIGKILL')
    }
  })

  it('mutex: a pid reused by an unrelated later process is not a live run', async () => {
    const sleeper = trackProcess(spawn('sleep', ['60'], {stdio: 'ignore'}))
    try {
      const p = project([{id: 'hx-r'}])
      // the file says the run started long before this `sleep` process existed
      writeFileSync(path.join(p.root, '.ddx', 'helix.pid'), `${sleeper.pid} 2026-01-01T00:00:00.000Z\n`)
      const r = await helixIn(p, ['run', ...NO_REVIEW, '--max-cycles', '1'])
      expect(r.code).toBe(0)
      expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
      expect(runState(p).parallel_run_denied_count).toBe(0)
    } finally {
      sleeper.kill('SIGKILL')
    }
  })

  it('--dry-run prints the command and prompt and changes nothing', async () => {
    const p = project([{id: 'hx-dry'}])
    const before = readFileSync(p.tracker, 'utf8')
    const r = await helixIn(p, ['run', '--dry-run'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('--dangerously-bypass-approvals-and-sandbox exec -C')
    expect(r.stdout).toContain('Implementation target: hx-dry')
    expect(readFileSync(p.tracker, 'utf8')).toBe(before)
    expect(existsSync(path.join(p.root, '.helix-logs'))).toBe(false)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    expect(calls(p)).toEqual([])
  })

  it('helix build runs one cycle on the selected bead', async () => {
    const p = project([{id: 'hx-first', priority: 0}, {id: 'hx-pick', title: 'Fix the Widget'}])
    const r = await helixIn(p, ['build', 'widget', ...NO_REVIEW])
    expect(r.code).toBe(0)
    expect(implOrder(p)).toEqual(['hx-pick'])
    expect(beads(p).get('hx-first')!.status).toBe('open')
    // a selector naming no bead at all: one line, before the run starts (no run-state, no log)
    rmSync(path.join(p.root, '.ddx', 'run-state.json'), {force: true})
    const logs = readdirSync(path.join(p.root, '.helix-logs')).sort()
    const none = await helixIn(p, ['build', 'nothing-matches'])
    expect(none.code).toBe(1)
    expect(none.stderr).toBe("helix: no bead matches 'nothing-matches' (by id, parent, spec-id, label or title); 'helix tracker list' shows them\n")
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    expect(readdirSync(path.join(p.root, '.helix-logs')).sort()).toEqual(logs)
    // one that matches a bead that is not ready is still the run's to say
    const closed = await helixIn(p, ['build', 'widget'])
    expect(closed.code).toBe(1)
    expect(closed.stderr).toContain("helix: no ready issue matches 'widget'")
  })

  it('bad flags: one line, exit 1, nothing on disk', async () => {
    const p = project([{id: 'hx-x'}])
    // the one the shell sees (the built CLI's exit code); the rest go through the same refusal in-process
    const r = helix(p, ['run', '--max-cycles', 'lots'])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    // the one line says what is wrong with the value, not just which flag oclif was parsing
    for (const args of [['run', '--max-cycles', '-1'], ['run', '--review-every', 'x'], ['build', '--review-threshold', '-5']]) {
      const bad = await helixIn(p, args)
      expect(bad.code, args.join(' ')).toBe(1)
      expect(bad.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1)
      expect(bad.stderr, args.join(' ')).toBe(`helix: invalid ${args[1]} '${args[2]}': expected a whole number${args[2] === 'x' ? '' : ' ≥ 0'}\n`)
    }
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    const missing = await helixIn(p, ['run', '--agent', 'no-such-agent-xyz'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("helix: agent 'no-such-agent-xyz' not found on PATH\n")
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    expect(existsSync(path.join(p.root, '.helix-logs'))).toBe(false)
    // in a directory that is not a helix project, nothing at all is created
    const bare = makeTempDir('helix-bare-')
    const inBare = await helixInProcess(bare, ['run', '--agent', 'no-such-agent-xyz'])
    expect(inBare.code).toBe(1)
    expect(readdirSync(bare)).toEqual([])
  })
})
