import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {beads, helixIn, project, writeExecutable} from './e2e-helpers.js'

// a command agent that reports 600 tokens and fails every implementation; the check says STOP
const AGENT = `#!/bin/sh
cat >/dev/null
case "$HELIX_ACTION" in
  implementation) echo "could not do $HELIX_BEAD_ID"; echo "TOKENS_USED: 600"; exit 1 ;;
  check) echo "NEXT_ACTION: STOP" ;;
  *) echo "REVIEW_STATUS: CLEAN" ;;
esac
`

// three runs one after another in the test's own process: the spend lives on disk, in the tracker
describe('per-bead budget across a restart (SPEC 14.6)', () => {
  it('600 tokens per failed attempt, --max-bead-tokens 1000: the spend survives the restart and the bead is blocked after its second attempt', async () => {
    const p = project([{id: 'hx-b0001'}])
    const agent = path.join(p.root, '..', 'agent.sh')
    writeExecutable(agent, AGENT)
    const count = () => (beads(p).get('hx-b0001') as Record<string, unknown>)
    // first run: one attempt, then the run is over (helix build)
    const first = await helixIn(p, ['build', '--agent', agent, '--no-auto-review'], {HELIX_MAX_BEAD_TOKENS: '1000'})
    expect(first.stderr).toContain('hx-b0001')
    expect(count()['helix-tokens']).toBe(600)
    expect(count().status).toBe('open')
    // second run: attempt 2 brings it to 1200 ≥ 1000 — blocked, never a third dispatch
    const second = await helixIn(p, ['run', '--agent', agent, '--no-auto-review', '--max-bead-tokens', '1000'])
    expect(second.code).toBe(0)
    const b = count()
    expect(b['helix-tokens']).toBe(1200)
    expect(b.labels).toContain('blocked')
    expect(String(b.notes)).toMatch(/BUDGET \[[^\]]+\]: 1200 of 1000 tokens/)
    expect(second.stderr).toContain('hx-b0001 — bead budget reached: 1200 of 1000 tokens')
    expect(second.stderr).toMatch(/run complete: 1 attempted/)
    // a third run does not dispatch it either
    const third = await helixIn(p, ['run', '--agent', agent, '--no-auto-review', '--max-bead-tokens', '1000'])
    expect(third.stderr).toMatch(/run complete: 0 attempted/)
    expect(count()['helix-tokens']).toBe(1200)
  }, 60_000)
})
