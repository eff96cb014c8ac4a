/**
 * The agent as an adversary (SPEC 3, 14): stubs named `claude` / `codex` first on
 * PATH that replay the real CLIs' failure captures (test/fixtures/agent-output, copies of the shared captures)
 * mid-run, after good beads, through the built CLI.
 */
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {beads, helix, project, REPO, runState, writeExecutable, type Project} from '../loop/e2e-helpers.js'

const FIXTURES = path.join(REPO, 'test', 'fixtures', 'agent-output')
const made: Project[] = []
afterEach(() => {
  for (const p of made.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

/**
 * A stub `name` on PATH. Per bead, the plan says what each call does: `close` (closes the
 * bead and says `text`), `replay:<file>:<rc>` (prints a capture and exits rc),
 * `stderr:<file>:<rc>`, `hang:<file>` (prints a capture, then never ends).
 * Calls that are not implementation answer with `text` (default `NEXT_ACTION: STOP`);
 * STUB_TEXT=1 answers in plain text (codex's text mode) instead of JSON events.
 */
function stubProject(name: 'claude' | 'codex', beadList: Array<Record<string, unknown>>, plan: Record<string, string>, text: Record<string, string> = {}): Project {
  const p = project(beadList, {})
  made.push(p)
  writeFileSync(path.join(p.stubDir, 'plan.json'), JSON.stringify({plan, text}))
  writeExecutable(
    path.join(p.binDir, name),
    `#!/usr/bin/env node
import fs from 'node:fs'
const name = ${JSON.stringify(name)}
const dir = ${JSON.stringify(p.stubDir)}
const tracker = ${JSON.stringify(p.tracker)}
const fixtures = ${JSON.stringify(FIXTURES)}
const id = process.env.HELIX_BEAD_ID ?? ''
const action = process.env.HELIX_ACTION ?? ''
const {plan, text} = JSON.parse(fs.readFileSync(dir + '/plan.json', 'utf8'))
fs.appendFileSync(dir + '/calls.jsonl', JSON.stringify({action, bead: id}) + '\\n')
const say = (t) => {
  if (process.env.STUB_TEXT === '1') console.log(t)
  else if (name === 'claude') console.log(JSON.stringify({type: 'result', subtype: 'success', is_error: false, result: t, usage: {input_tokens: 1, output_tokens: 1}}))
  else console.log(JSON.stringify({type: 'item.completed', item: {id: 'i', type: 'agent_message', text: t}}))
}
const step = action === 'implementation' ? (plan[id] ?? 'close') : (plan['@' + action] ?? 'answer')
if (step === 'answer') { say(text[action] ?? 'NEXT_ACTION: STOP'); process.exit(0) }
const [kind, file, rc] = step.split(':')
if (kind === 'replay') { process.stdout.write(fs.readFileSync(fixtures + '/' + file)); process.exit(Number(rc)) }
if (kind === 'stderr') { process.stderr.write(fs.readFileSync(fixtures + '/' + file)); process.exit(Number(rc)) }
if (kind === 'hang') { process.stdout.write(fs.readFileSync(fixtures + '/' + file)); setInterval(() => {}, 1000) }
else {
  const lines = fs.readFileSync(tracker, 'utf8').split('\\n').filter(Boolean).map((l) => JSON.parse(l))
  for (const b of lines) if (b.id === id) b.status = 'closed'
  fs.writeFileSync(tracker, lines.map((b) => JSON.stringify(b) + '\\n').join(''))
  say(text.implementation ?? 'done ' + id)
}
`,
  )
  return p
}

const RUN = ['run', '--no-auto-review', '--summary']
const bead = (p: Project, id: string) => beads(p).get(id)!

describe('the agent fails mid-run with its real failure output', () => {
  it('claude not logged in on the third bead: exit 4 with its words; two beads closed, the third open and not counted', () => {
    const p = stubProject('claude', [{id: 'hx-a'}, {id: 'hx-b'}, {id: 'hx-c'}], {'hx-c': 'replay:claude-2.1.197-not-logged-in.stream.jsonl:1'})
    const r = helix(p, [...RUN, '--agent', 'claude', '--review-agent', 'claude'])
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toMatch(/^helix: agent claude unavailable: Not logged in · Please run \/login$/m)
    expect(bead(p, 'hx-a').status).toBe('closed')
    expect(bead(p, 'hx-b').status).toBe('closed')
    expect(bead(p, 'hx-c')).toMatchObject({status: 'open'})
    expect(bead(p, 'hx-c').labels ?? []).not.toContain('blocked')
    expect(bead(p, 'hx-c').notes ?? '').not.toMatch(/BLOCKED/)
    const s = runState(p)
    expect(s.stop_reason).toBe('agent_unavailable')
    expect(s.attempts?.['hx-c']).toBeUndefined()
  })

  it('codex offline (the real capture, then reconnecting forever) on the last bead: the agent is unavailable, the bead is not blamed', () => {
    const p = stubProject('codex', [{id: 'hx-a'}, {id: 'hx-b'}], {'hx-b': 'hang:codex-0.169.0-offline.jsonl'})
    const r = helix(p, [...RUN, '--agent', 'codex', '--review-agent', 'codex', '--stall-timeout', '2'])
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toMatch(/^helix: agent codex unavailable: stalled after 2s without starting work; its last notice: Reconnecting\.\.\. waiting for network \(Connection failed: error sending request\)$/m)
    expect(r.stderr).not.toMatch(/BLOCKED/)
    expect(bead(p, 'hx-a').status).toBe('closed')
    const b = bead(p, 'hx-b')
    expect(b.status).toBe('open')
    expect(b.labels ?? []).not.toContain('blocked')
    expect(b.notes ?? '').not.toMatch(/BLOCKED/)
    expect(b['claim-token']).toBeUndefined()
    const s = runState(p)
    expect(s.stop_reason).toBe('agent_unavailable')
    expect(s.attempts?.['hx-b']).toBeUndefined()
  })

  it('claude offline that gives up after its API retries, on a one-bead queue: exit 4, the bead is tried once and not blocked', () => {
    const p = stubProject('claude', [{id: 'hx-a'}], {'hx-a': 'offline'})
    const stub = path.join(p.binDir, 'claude')
    // the real capture's api_retry notices, then the error result claude ends with once its retries are spent
    const end = {type: 'result', subtype: 'success', is_error: true, result: 'API Error: Connection error.', usage: {input_tokens: 0, output_tokens: 0}}
    writeExecutable(
      stub,
      readFileSync(stub, 'utf8').replace(
        "const [kind, file, rc] = step.split(':')",
        `if (step === 'offline') { process.stdout.write(fs.readFileSync(fixtures + '/claude-2.1.197-offline.stream.jsonl')); console.log(${JSON.stringify(JSON.stringify(end))}); process.exit(1) }\nconst [kind, file, rc] = step.split(':')`,
      ),
    )
    const r = helix(p, [...RUN, '--agent', 'claude', '--review-agent', 'claude'])
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toMatch(/^helix: agent claude unavailable: API Error: Connection error\. \(gave up after 6 API retries, before any work\)$/m)
    expect(r.stderr).not.toMatch(/BLOCKED/)
    expect(bead(p, 'hx-a').status).toBe('open')
    expect(bead(p, 'hx-a').labels ?? []).not.toContain('blocked')
    expect(runState(p).attempts?.['hx-a']).toBeUndefined()
  })

  it('codex in text mode writing about usage limits in its work is not out of quota: the bead completes, no pause', () => {
    const p = stubProject('codex', [{id: 'hx-a', title: 'handle usage_limit_reached from the API'}], {}, {
      implementation: "Added a retry for usage_limit_reached.\nThe message \"You've hit your usage limit\" is now shown to the user.\nSee src/quota.ts for usage_limit_reached.",
    })
    // a wrong pause would wait 15 min for a probe: --max-quota-wait 1 turns it into an immediate exit 4
    const r = helix(p, [...RUN, '--agent', 'codex', '--review-agent', 'codex', '--max-quota-wait', '1'], {STUB_TEXT: '1'})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).not.toMatch(/quota exhausted|pausing/)
    expect(bead(p, 'hx-a').status).toBe('closed')
    expect(runState(p).completed_cycles).toBe(1)
  })

  it('claude on overage: a rejected rate-limit event in a call that then closes its bead and succeeds keeps the cycle; nothing pauses', () => {
    const p = stubProject('claude', [{id: 'hx-a'}, {id: 'hx-b'}], {})
    const stub = path.join(p.binDir, 'claude')
    // before its work on hx-a, claude reports the five-hour window rejected but carries on with overage
    const event = {type: 'rate_limit_event', rate_limit_info: {status: 'rejected', resetsAt: 0, rateLimitType: 'five_hour', isUsingOverage: true, overageStatus: 'allowed'}}
    writeExecutable(
      stub,
      readFileSync(stub, 'utf8').replace(
        'const step =',
        `if (action === 'implementation' && id === 'hx-a') console.log(JSON.stringify({...${JSON.stringify(event)}, rate_limit_info: {...${JSON.stringify(event.rate_limit_info)}, resetsAt: Math.floor(Date.now() / 1000) + 3600}}))\nconst step =`,
      ),
    )
    // a wrong pause (an hour) would be beyond --max-quota-wait and exit 4 at once
    const r = helix(p, [...RUN, '--agent', 'claude', '--review-agent', 'claude', '--max-quota-wait', '60'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).not.toMatch(/quota/)
    expect(r.stderr).toMatch(/cycle 1: hx-a → COMPLETE/)
    expect(bead(p, 'hx-a').status).toBe('closed')
    expect(bead(p, 'hx-b').status).toBe('closed')
    const s = runState(p)
    expect(s.completed_cycles).toBe(2)
    expect(s.paused_until ?? null).toBeNull()
  })
})
