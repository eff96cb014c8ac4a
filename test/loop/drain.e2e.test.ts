import {describe, expect, it} from 'vitest'
import {calls, helix, helixIn, project} from './e2e-helpers.js'

/** `helix run` on an empty queue, in the test's own process (src/): what the drain does and prints */
const run = async (script: Record<string, unknown>, extra: string[] = [], env: Record<string, string> = {}) => {
  const p = project([], script)
  const r = await helixIn(p, ['run', '--no-auto-review', ...extra], env)
  return {p, r, actions: calls(p).map((c) => c.action)}
}

// One e2e per drain outcome through the real wiring (drain actions, the backfill report
// on disk, the auto-align env and flags, exit 1). Every NEXT_ACTION branch, including
// BUILD's orphan-recovery breaker, DESIGN's 3-pass bound, WAIT and GUIDANCE, a
// failing check and a missing trailer, is an orchestrator.test.ts unit ('queue drain');
// exit 1 end to end is 'BACKFILL without a report' here, and an invalid trailer from a
// real agent is check.e2e.test.ts 'an invalid trailer is no trailer'. The runs are in-process;
// the exit code of a run the loop failed is the built CLI's, as a shell sees it.
describe('queue drain through the real wiring', () => {
  it('POLISH then STOP', async () => {
    const {r, actions} = await run({check: ['next:POLISH', 'next:STOP']})
    expect(r.code).toBe(0)
    expect(actions).toEqual(['check', 'polish', 'check'])
    expect(r.stderr).toContain('helix: queue drained, running polish')
    expect(r.stderr).toContain('helix: stopping after check returned STOP')
  })

  it('ALIGN with auto-align runs alignment once, then stops', async () => {
    const {r, actions} = await run({check: ['next:ALIGN']}, [], {HELIX_AUTO_ALIGN: '1'})
    expect(r.code).toBe(0)
    expect(actions).toEqual(['check', 'alignment', 'check'])
    expect(r.stderr).toContain('helix: queue drained, running alignment')
    expect(r.stderr).toContain('helix: stopping after check returned ALIGN')
  })

  it('ALIGN with --no-auto-align stops at once', async () => {
    const {r, actions} = await run({check: ['next:ALIGN']}, ['--no-auto-align'], {HELIX_AUTO_ALIGN: '1'})
    expect(actions).toEqual(['check'])
    expect(r.stderr).toContain('helix: stopping after check returned ALIGN')
  })

  it('BACKFILL runs once (report required), the second BACKFILL stops', async () => {
    const {r, actions} = await run({check: ['next:BACKFILL'], backfill: ['backfill-ok']})
    expect(r.code).toBe(0)
    expect(actions).toEqual(['check', 'backfill', 'check'])
    expect(r.stderr).toContain('helix: queue drained, running backfill')
    expect(r.stderr).toContain('helix: stopping after check returned BACKFILL')
  })

  it('BACKFILL without a report fails the run: exit 1 from the built CLI', () => {
    const p = project([], {check: ['next:BACKFILL'], backfill: ['noop']})
    const r = helix(p, ['run', '--no-auto-review'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: backfill failed after queue drain')
  })

  it('STOP with auto-align: one alignment before stopping', async () => {
    const {r, actions} = await run({check: ['next:STOP']}, ['--auto-align'])
    expect(r.code).toBe(0)
    expect(actions).toEqual(['check', 'alignment'])
    expect(r.stderr).toContain('helix: queue empty, running alignment before stopping')
    expect(r.stderr).toContain('helix: stopping after check returned STOP')
  })
})
