import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readFileSync, realpathSync, rmSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {makeTempDir, trackProcess} from '../support/tmp.js'

const REPO = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..'))

interface DemoRun {
  rc: number | null
  /** stdout and stderr, interleaved in arrival order */
  all: string
  stdout: string
  workspace: string | null
}

/** Runs `node scripts/demo.mjs <args>` (what `npm run demo` runs) and collects its output. */
function runDemo(args: string[]): Promise<DemoRun> {
  return new Promise((resolve, reject) => {
    // --no-build: never rebuild dist/ under the feet of other test files running in parallel
    const child = trackProcess(
      spawn(process.execPath, [path.join(REPO, 'scripts', 'demo.mjs'), '--no-build', ...args], {
        cwd: REPO,
        // its own TMPDIR, removed with the test (tmp.ts) even when the demo never reaches its
        // own cleanup: a demo killed at the hook timeout left its helix-demo-* workspace behind
        env: {...process.env, NODE_ENV: 'production', TMPDIR: makeTempDir('helix-demo-tmp-')},
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    )
    let all = ''
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => {
      all += d.toString()
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      all += d.toString()
    })
    child.on('error', reject)
    child.on('close', (rc) => {
      const kept = /kept the workspace at (.+)$/m.exec(stdout)
      resolve({rc, all, stdout, workspace: kept ? kept[1].trim() : null})
    })
  })
}

// One full demo run here (--keep, to inspect the workspace). The run without --keep
// (workspace removed) is .ci/run's demo smoke step, which runs `npm run demo` as the README says.
describe('npm run demo', () => {
  let run: DemoRun

  beforeAll(async () => {
    run = await runDemo(['--keep'])
  }, 120_000)

  afterAll(() => {
    if (run?.workspace) rmSync(path.dirname(run.workspace), {recursive: true, force: true})
  })

  it('exits 0 and keeps the workspace when asked', () => {
    expect(run.rc, run.all).toBe(0)
    expect(run.workspace).not.toBeNull()
    expect(existsSync(path.join(run.workspace as string, '.ddx', 'beads.jsonl'))).toBe(true)
  })

  it('runs helix in summary mode and completes every bead of the queue', () => {
    expect(run.all).toContain('$ helix run --summary')
    for (const id of ['hx-de000002', 'hx-de000003', 'hx-de000004', 'hx-de000005', 'hx-de000006']) {
      expect(run.all).toMatch(new RegExp(`cycle \\d+: ${id} → COMPLETE`))
    }
    // summary-mode agent lines point into the session log
    expect(run.all).toMatch(/codex complete \(rc=0, \d+s, [\d,]+ tokens\) — log L\d+–L\d+ in \/\S+\.log/)
  })

  it('shows the failed first attempt and its retry after the backoff', () => {
    const attempts = run.all.match(/cycle \d+: hx-de000005 \(\d+ ready\)/g) ?? []
    expect(attempts.length).toBe(2)
    // SPEC 16.3: a failed cycle says why
    expect(run.all).toMatch(/cycle 1: hx-de000005 → FAILED \(rc=1: \[demo-agent\] node --test: FAILED — not closing hx-de000005\)/)
    expect(run.all).toContain('implementation failed during cycle 1')
    expect(run.all).toContain('FAILED — not closing hx-de000005')
    expect(run.all).toMatch(/backoff {2}bead=hx-de000005 {2}attempts=1 {2}seconds=1/)
    expect(run.all).toMatch(/Retry: hx-de000005 failed in cycle 1, waited out its backoff while \d+ other cycle\(s\) ran, and completed in cycle \d+\./)
  })

  it('shows the epic focused and closed', () => {
    expect(run.all).toMatch(/epic focus: hx-de000001 → child hx-de000002/)
    expect(run.all).toMatch(/epic hx-de000001 complete — closing/)
  })

  it('shows the review finding filed as a bead and then implemented', () => {
    expect(run.all).toMatch(/review reported 1 issue\(s\), 1 filed as tracker issues/)
    const filed = /\[demo-agent\] filed (hx-[0-9a-f]{8})/.exec(run.all)
    expect(filed).not.toBeNull()
    expect(run.all).toMatch(new RegExp(`cycle \\d+: ${filed?.[1]} → COMPLETE`))
  })

  it('drains the queue into check, which says STOP, and prints the run summary and status', () => {
    expect(run.all).toMatch(/NEXT_ACTION: STOP/)
    expect(run.all).toContain('helix: stopping after check returned STOP')
    expect(run.all).toMatch(/run complete: 7 attempted, 6 completed, 0 skipped, [\d,]+ tokens/)
    expect(run.all).toContain('$ helix status')
    expect(run.all).toMatch(/^Tracker:/m)
    expect(run.all).toMatch(/^\s+Closed:\s+7/m)
    expect(run.all).toMatch(/^Last Run:/m)
  })

  it('leaves a workspace where the agent really did the work', () => {
    const ws = run.workspace as string
    const log = spawnSync('git', ['log', '--format=%s'], {cwd: ws, encoding: 'utf8'}).stdout.trim().split('\n')
    // six agent commits on top of the initial one
    expect(log).toHaveLength(7)
    expect(log).toContain('hx-de000002: Add slugify(text)')
    const tests = spawnSync(process.execPath, ['--test'], {cwd: ws, encoding: 'utf8'})
    expect(tests.status, tests.stdout + tests.stderr).toBe(0)
    expect(readFileSync(path.join(ws, 'lib', 'slugify.js'), 'utf8')).toContain("split(/\\s+/)")
    const beads = readFileSync(path.join(ws, '.ddx', 'beads.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(beads).toHaveLength(7)
    expect(beads.every((b) => b.status === 'closed')).toBe(true)
    expect(beads.filter((b) => (b.labels ?? []).includes('review-finding'))).toHaveLength(1)
  })
})

describe('npm run demo argument handling', () => {
  it('rejects an unknown option with one line and exit 1', () => {
    const r = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'demo.mjs'), '--bogus'], {encoding: 'utf8'})
    expect(r.status).toBe(1)
    expect(r.stderr.split('\n')[0]).toBe("helix demo: unknown option '--bogus'")
  })
})
