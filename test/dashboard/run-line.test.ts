// The page's run line says why the last run stopped in the words `helix status` uses
// under Last Run: the reason and what stopped it (the agent that was unavailable, the
// budget that was reached), not the bare code (`agent_unavailable`).
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {trackerText} from '../support/project.js'
import {ProjectReader} from '../../src/dashboard/project-view.js'
import {helixInProcess} from '../support/in-process.js'

function endedRun(stop: Record<string, unknown>): string {
  const root = path.join(makeTempDir('helix-dash-runline-'), 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText([{id: 'hx-a', title: 'first'}]))
  const at = '2026-11-27T02:00:00Z'
  const rs = {pid: 999_999, started_at: at, updated_at: at, phase: 'stopped', agent: 'codex', review_agent: null, current_cycle: 1, attempted_cycles: 1, completed_cycles: 0, closed_beads: [], skipped: [], attempts: {}, current_bead: null, current_bead_started_at: null, focused_epic: null, total_tokens: 0, cycles: [], last_run: null, parallel_run_denied_count: 0, ...stop}
  writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify(rs))
  return root
}

describe('dashboard run line', () => {
  it("an ended run says why in status's words, with what stopped it", async () => {
    const message = "codex is not logged in: run 'codex login' (attempt preserved)"
    const root = endedRun({stop_reason: 'agent_unavailable', stop_message: message})
    const {view} = await new ProjectReader(0, root, {}).read(new Date('2026-11-27T03:00:00Z'))
    expect(view.run?.live).toBe(false)
    expect(view.run?.stopped).toBe(`agent_unavailable (${message})`)
    // the same words as helix status's Last Run
    const status = await helixInProcess(root, ['status'])
    expect(status.stdout).toContain(`Stopped: ${view.run?.stopped}`)
  })

  it('a run without a message says the reason; one without a stop says so', async () => {
    const {view} = await new ProjectReader(0, endedRun({stop_reason: 'completed'}), {}).read()
    expect(view.run?.stopped).toBe('completed')
    const killed = await new ProjectReader(0, endedRun({stop_reason: null}), {}).read()
    expect(killed.view.run?.stopped).toBe('no stop recorded (killed?)')
  })
})
