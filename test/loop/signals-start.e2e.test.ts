// issue 30: a SIGTERM in the first ~0.5 s of `helix run` killed it by the signal, and
// during the review preflight (a command agent probed for REVIEW_STATUS) it left the
// probe's agent running and its throw-away project in TMPDIR. The handlers are now
// armed at the command's start: the preflight's agent group is ended, its project
// removed, and the run ends with its interrupted exit code and lines (SPEC 5.10, 17).
import {randomUUID} from 'node:crypto'
import {chmodSync, existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixProject, type HelixProject} from '../support/project.js'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'

/**
 * The agent: its review answer (the preflight) waits forever, ignoring SIGTERM when
 * asked; every process it starts carries ADV_MARK in its environment.
 */
const AGENT = `#!/bin/sh
echo "$HELIX_ACTION $$" >> "$ADV_DIR/calls"
if [ "$HELIX_ACTION" = review ]; then
  [ "$ADV_IGNORE_TERM" = 1 ] && trap '' TERM
  sleep 300 &
  wait
fi
exit 0
`

/** pids of live processes whose environment holds the mark */
function marked(mark: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const st = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (/^\d+ \(.*\) Z /s.test(st)) continue
      if (readFileSync(`/proc/${name}/environ`).includes(`ADV_MARK=${mark}\0`)) out.push(Number(name))
    } catch {
      // gone meanwhile, or not ours to read: not a leftover of this test
    }
  }
  return out
}

async function setUp(): Promise<{p: HelixProject; env: Record<string, string>; tmp: string; mark: string}> {
  const p = await helixProject({beads: [{id: 'hx-s'}], git: true})
  writeFileSync(path.join(p.root, 'agent.sh'), AGENT)
  chmodSync(path.join(p.root, 'agent.sh'), 0o755)
  const tmp = makeTempDir('helix-sig-tmp-')
  const mark = randomUUID()
  return {p, tmp, mark, env: {TMPDIR: tmp, ADV_MARK: mark, ADV_DIR: p.base}}
}

const scratchLeft = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('helix-agent-check-'))
const calls = (p: HelixProject) => (existsSync(path.join(p.base, 'calls')) ? readFileSync(path.join(p.base, 'calls'), 'utf8').trim().split('\n') : [])

describe('signals before the loop starts (built CLI)', () => {
  it.each([
    ['SIGTERM', 143, '0'],
    ['SIGINT', 130, '1'],
  ] as const)('%s during the review preflight: its agent group ended, its project removed, nothing saved, exit %i', async (sig, code, ignoreTerm) => {
    const {p, env, tmp, mark} = await setUp()
    await using _p = p
    const run = p.start(['run', '--agent', './agent.sh', '--workers', '1', '--save-config'], {...env, ADV_IGNORE_TERM: ignoreTerm})
    await waitFor(() => calls(p).some((l) => l.startsWith('review ')) && marked(mark).length >= 3, {timeoutMs: 30_000, what: 'the preflight agent'})
    expect(scratchLeft(tmp)).toHaveLength(1)
    run.child.kill(sig)
    const r = await run.done
    expect(r.signal).toBeNull()
    expect(r.code, r.stderr).toBe(code)
    expect(r.stderr).toContain(`helix: interrupted (${sig})`)
    expect(r.stderr).toMatch(/helix: ═══ run complete: 0 attempted/)
    expect(marked(mark)).toEqual([])
    expect(scratchLeft(tmp)).toEqual([])
    expect(existsSync(path.join(p.root, '.helix', 'config.json'))).toBe(false)
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
    expect(p.beads().get('hx-s')!.status).toBe('open')
    expect(calls(p).filter((l) => l.startsWith('implementation'))).toEqual([])
  }, 60_000)

  // The signal at several points of the start: before node runs any of helix nothing can
  // catch it (the process ends by SIGTERM, having started nothing); from the command's
  // start on it is the orderly 143. Either way nothing is left running or in TMPDIR.
  it('SIGTERM at several points of the start: never an orphan or a temp project', async () => {
    const {p, env, tmp, mark} = await setUp()
    await using _p = p
    const outcomes: string[] = []
    for (const delay of [0, 150, 300, 500, 800, 1200]) {
      const run = p.start(['run', '--agent', './agent.sh', '--workers', '1'], env)
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
      run.child.kill('SIGTERM')
      const r = await run.done
      outcomes.push(r.signal ?? String(r.code))
      if (r.signal === null) {
        expect(r.code, `${delay} ms: ${r.stderr}`).toBe(143)
        expect(r.stderr).toContain('helix: interrupted (SIGTERM)')
      } else expect(r.signal).toBe('SIGTERM')
      await waitFor(() => marked(mark).length === 0, {timeoutMs: 10_000, what: `no marked process after ${delay} ms`})
      expect(scratchLeft(tmp), `${delay} ms`).toEqual([])
      expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
    }
    expect(outcomes.length).toBe(6)
  }, 120_000)
})
