/**
 * Agent health end to end (SPEC 14, 16.1, 16.5, 16.6) with a tiny inline command
 * agent. The quota/unavailable cases need the command decoder's verdict
 * (`HELIX_AGENT_STATUS:` lines, decoder branch); they run once it is there.
 */
import {existsSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {beads, helix, helixIn, project, runState, writeExecutable, type Project} from './e2e-helpers.js'

const made: Project[] = []
afterEach(() => {
  for (const p of made.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

/** A command agent: reads its plan from <stub>/plan.json ({bead: [step, …]}), one step per call: quota:<iso>, unavailable:<why>, fail:<line>, close */
function agentProject(beadList: Array<Record<string, unknown>>, plan: Record<string, string[]>): {p: Project; agent: string} {
  const p = project(beadList)
  made.push(p)
  writeFileSync(path.join(p.stubDir, 'plan.json'), JSON.stringify(plan))
  const agent = path.join(p.stubDir, 'agent.mjs')
  writeExecutable(
    agent,
    `#!/usr/bin/env node
import fs from 'node:fs'
const dir = ${JSON.stringify(p.stubDir)}
const tracker = ${JSON.stringify(p.tracker)}
const id = process.env.HELIX_BEAD_ID ?? ''
const action = process.env.HELIX_ACTION ?? ''
if (action !== 'implementation') { console.log('NEXT_ACTION: WAIT'); process.exit(0) }
const plan = JSON.parse(fs.readFileSync(dir + '/plan.json', 'utf8'))
const countFile = dir + '/count-' + id
const n = fs.existsSync(countFile) ? Number(fs.readFileSync(countFile, 'utf8')) : 0
fs.writeFileSync(countFile, String(n + 1))
const steps = plan[id] ?? plan.default ?? ['close']
const step = steps[Math.min(n, steps.length - 1)]
if (step.startsWith('quota:')) { const v = step.slice(6); console.log('HELIX_AGENT_STATUS: QUOTA ' + (v === 'soon' ? new Date(Date.now() + 2000).toISOString() : v)); process.exit(1) }
if (step.startsWith('unavailable:')) { console.log('HELIX_AGENT_STATUS: UNAVAILABLE ' + step.slice(12)); process.exit(1) }
if (step.startsWith('fail:')) { console.log('working'); console.log(step.slice(5).replace('#', String(Math.floor(Math.random() * 1e6)))); process.exit(1) }
const lines = fs.readFileSync(tracker, 'utf8').split('\\n').filter(Boolean).map((l) => JSON.parse(l))
for (const b of lines) if (b.id === id) b.status = 'closed'
fs.writeFileSync(tracker, lines.map((b) => JSON.stringify(b) + '\\n').join(''))
console.log('done ' + id)
`,
  )
  return {p, agent}
}

const RUN = ['run', '--no-auto-review', '--summary']

describe('agent health (in-process runs, one exit code through the built CLI)', () => {
  it('quota pause: resumes after a 2 s reset and completes the bead; nothing counted against it', async () => {
    const {p, agent} = agentProject([{id: 'hx-q'}], {'hx-q': ['quota:soon', 'close']})
    const r = await helixIn(p, [...RUN, '--agent', agent])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/quota exhausted; pausing until \d\d:\d\d \(in \d+s\)/)
    expect(beads(p).get('hx-q')!.status).toBe('closed')
    const s = runState(p)
    expect(s.attempts['hx-q']).toBeUndefined()
    expect(s.completed_cycles).toBe(1)
  })

  // exit 4 as a shell sees it (the built CLI); the other runs here are in the test's own process
  it('quota beyond --max-quota-wait: exit 4, stop_reason quota, bead open', () => {
    const {p, agent} = agentProject([{id: 'hx-q'}], {'hx-q': ['quota:2099-01-01T00:00:00Z']})
    const r = helix(p, [...RUN, '--agent', agent, '--max-quota-wait', '60'])
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toContain('helix: quota resets at 2099-01-01T00:00:00.000Z, beyond --max-quota-wait; stopping')
    expect(runState(p).stop_reason).toBe('quota')
    expect(beads(p).get('hx-q')!.status).toBe('open')
  })

  it('unavailable command agent: exit 4, bead open, no label, no note', async () => {
    const {p, agent} = agentProject([{id: 'hx-u'}], {'hx-u': ['unavailable:not logged in']})
    const r = await helixIn(p, [...RUN, '--agent', agent])
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toMatch(/helix: agent .*agent\.mjs unavailable: not logged in/)
    const b = beads(p).get('hx-u')!
    expect(b.status).toBe('open')
    expect(b.labels ?? []).not.toContain('blocked')
    expect(b.notes ?? '').toBe('')
    expect(runState(p)).toMatchObject({stop_reason: 'agent_unavailable', stop_message: 'not logged in'})
  })

  it('the same fast failure on two beads in a row is systemic: exit 4, no label, the second attempt not counted', async () => {
    const {p, agent} = agentProject([{id: 'hx-a', priority: 0}, {id: 'hx-b', priority: 1}], {default: ['fail:ERROR: backend 503 (request #)']})
    const r = await helixIn(p, [...RUN, '--agent', agent], {HELIX_BACKOFF_SLEEP: ''})
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toMatch(/helix: agent .* unavailable: ERROR: backend 503 \(request \d+\)/)
    const s = runState(p)
    expect(s.attempts).toEqual({'hx-a': 1})
    expect(s.stop_reason).toBe('agent_unavailable')
    for (const b of beads(p).values()) {
      expect(b.status).toBe('open')
      expect(b.labels ?? []).not.toContain('blocked')
    }
  })

  it('a run appends one runs.jsonl record and adds the runtime lines to .gitignore once', async () => {
    const {p, agent} = agentProject([{id: 'hx-a'}], {})
    const r = await helixIn(p, [...RUN.filter((a) => a !== '--summary'), '--agent', agent])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr.match(/added helix's runtime paths to \.gitignore/g)).toHaveLength(1)
    expect(readFileSync(path.join(p.root, '.gitignore'), 'utf8')).toContain('.helix-logs/')
    const again = await helixIn(p, [...RUN.filter((a) => a !== '--summary'), '--agent', agent])
    expect(again.stderr).not.toContain('.gitignore')
    const lines = readFileSync(path.join(p.root, '.helix-logs', 'runs.jsonl'), 'utf8').trim().split('\n')
    expect(lines).toHaveLength(2)
    const rec = JSON.parse(lines[0])
    expect(rec).toMatchObject({v: 1, workers: 1, attempted: 1, completed: 1, stop_reason: 'completed', exit_code: 0})
    expect(rec.cycles).toMatchObject([{bead: 'hx-a', outcome: 'COMPLETE', slot: 1, title: 'bead hx-a'}])
  })

  it.each([
    [['--stall-timeout', '-1'], '--stall-timeout'],
    [['--max-tokens', 'abc'], '--max-tokens'],
    [['--max-quota-wait', '0x'], '--max-quota-wait'],
    [['--workers', '0'], '--workers'],
    [['--notify', '/nonexistent/notifier'], '--notify'],
  ])('bad %j: one line naming the flag, exit 1, nothing on disk', async (args, flag) => {
    const p = project([{id: 'hx-a'}])
    made.push(p)
    const before = readdirSync(p.root).sort()
    const tracker = readFileSync(p.tracker, 'utf8')
    const r = await helixIn(p, ['run', ...args])
    expect(r.code).toBe(1)
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^helix: /)
    expect(lines[0]).toContain(flag)
    expect(readdirSync(p.root).sort()).toEqual(before)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    expect(readFileSync(p.tracker, 'utf8')).toBe(tracker)
  })

  it('--dry-run with no agent installed prints the command line, marks the agent, exit 0', async () => {
    const p = project([{id: 'hx-a'}])
    made.push(p)
    const r = await helixIn(p, ['run', '--dry-run', '--agent', 'no-such-agent-xyz'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^command: no-such-agent-xyz.*\(not found on PATH\)$/m)
    expect(r.stdout).toContain('--- prompt ---')
  })
})
