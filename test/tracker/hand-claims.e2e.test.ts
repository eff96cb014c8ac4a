// SPEC 13.3 as amended (issue 16 "hand-made claims"): only a run's own claims record
// `claimed-start`. A claim made with `helix tracker update <id> --claim` comes from a CLI
// that exits at once, usually run by a shell that exits too, so its pid proves nothing:
// it is judged by the age rule of 2.4. Every claimer here runs the built CLI through
// `sh -c '…; exit $?'`, so the claiming pid (the CLI's parent) is gone a moment later,
// as it is for an agent's or a person's one-off shell.
import {spawn} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {BIN, beads, helix, implOrder, project} from '../loop/e2e-helpers.js'
import {trackProcess} from '../support/tmp.js'

const CLAIMERS = 16
// 16 CLIs at once on a loaded 2-core machine: generous, the assertions hold at any speed
const SLOW = 240_000

function shellClaim(root: string, id: string, env: NodeJS.ProcessEnv): Promise<{code: number | null; stderr: string}> {
  return new Promise((resolve) => {
    const cmd = `"${process.execPath}" "${BIN}" tracker update "$1" --claim; exit $?`
    const child = trackProcess(spawn('sh', ['-c', cmd, 'sh', id], {cwd: root, env, stdio: ['ignore', 'ignore', 'pipe']}))
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({code, stderr}))
  })
}

function claimEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, ...extra}
  for (const k of Object.keys(env)) if (k.startsWith('HELIX_') && !(k in extra)) delete env[k]
  delete env.DDX_BEAD_DIR
  return env
}

describe('hand-made claims (built CLI)', () => {
  it(`${CLAIMERS} concurrent \`tracker update X --claim\` from exiting shells: exactly 1 winner, ${CLAIMERS - 1} exit 3; a second --claim exits 3`, async () => {
    const p = project([{id: 'hx-x'}, {id: 'hx-y'}])
    // the subject is the claim's compare-and-set, not lock waits: under heavy load a loser
    // may queue on the tracker lock past the default 10 s (exit 2, not 3)
    const env = claimEnv({...p.env, HELIX_LOCK_TIMEOUT: '120'})
    const results = await Promise.all(Array.from({length: CLAIMERS}, () => shellClaim(p.root, 'hx-x', env)))
    const codes = results.map((r) => r.code).sort()
    expect(codes).toEqual([0, ...Array(CLAIMERS - 1).fill(3)])
    for (const r of results.filter((x) => x.code === 3)) expect(r.stderr).toMatch(/^helix: cannot claim hx-x: already claimed by helix \(pid \d+\)\n$/)
    const x = beads(p).get('hx-x')!
    expect(x).toMatchObject({status: 'in_progress', owner: 'helix'})
    expect(x['claimed-pid']).toEqual(expect.any(Number))
    expect(typeof x['claimed-machine']).toBe('string')
    // no start token: the shell that claimed is gone, and that must not free the claim
    expect(x).not.toHaveProperty('claimed-start')
    // a second claim in a row, long after the first claimer exited
    const again = await shellClaim(p.root, 'hx-x', env)
    expect(again.code).toBe(3)
    expect(again.stderr).toMatch(/^helix: cannot claim hx-x: already claimed by helix \(pid \d+\)\n$/)
    expect(beads(p).get('hx-x')!['claim-token']).toBe(x['claim-token'])
    expect(beads(p).get('hx-y')!.status).toBe('open')
  }, SLOW)

  it('helix run does not take a bead someone claimed by hand a moment earlier', async () => {
    const p = project([{id: 'hx-a', priority: 0}, {id: 'hx-b', priority: 2}], {check: ['next:WAIT']})
    const claimed = await shellClaim(p.root, 'hx-a', claimEnv(p.env))
    expect(claimed.code).toBe(0)
    const token = beads(p).get('hx-a')!['claim-token']
    const r = helix(p, ['run', '--no-auto-review'])
    expect(r.code).toBe(0)
    expect(implOrder(p)).toEqual(['hx-b'])
    expect(r.stderr).not.toMatch(/reclaiming orphaned hx-a/)
    const a = beads(p).get('hx-a')!
    expect(a).toMatchObject({status: 'in_progress', owner: 'helix', 'claim-token': token})
  }, SLOW)
})
