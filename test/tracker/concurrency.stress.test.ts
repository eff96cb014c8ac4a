import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {spawn} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {parseTracker, serializeTracker} from '../../src/tracker/codec.js'
import {REPO, cleanEnv, helixAsync, tempProject} from './helpers.js'
import {trials} from '../support/stress.js'
import {trackProcess} from '../support/tmp.js'

// full counts under npm run test:stress; a smoke of each race in npm test: enough processes
// to race (three claimers, three writers, two CLI lanes), each doing little
const CLAIMERS = trials(16, 3)
const WRITERS = trials(8, 3)
const CREATES = trials(100, 15)
const CLI_LANES = trials(4, 2)
const CLI_CREATES = trials(8, 3)

function runNode(script: string, args: string[]): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const child = trackProcess(spawn(process.execPath, [script, ...args], {env: cleanEnv()}))
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({code, stdout, stderr}))
  })
}

describe('concurrency (real processes)', () => {
  it(`${CLAIMERS} parallel \`tracker update X --claim\`: exactly one wins, the others exit 3`, async () => {
    const {root, paths} = tempProject('{"id":"hx-1","title":"contested"}\n{"id":"hx-2","title":"other"}\n')
    const results = await Promise.all(Array.from({length: CLAIMERS}, () => helixAsync(root, ['tracker', 'update', 'hx-1', '--claim'])))
    const codes = results.map((r) => r.code).sort()
    expect(codes).toEqual([0, ...Array(CLAIMERS - 1).fill(3)])
    for (const r of results.filter((x) => x.code === 3)) expect(r.stderr).toMatch(/^helix: cannot claim hx-1: already claimed by helix \(pid \d+\)\n$/)
    const snap = parseTracker(readFileSync(paths.file, 'utf8'), paths.file)
    expect(snap.byId.get('hx-1')!.status).toBe('in_progress')
    expect(snap.byId.get('hx-2')).toEqual({id: 'hx-2', title: 'other'})
  })

  it(`${WRITERS} writer processes x ${CREATES} creates through the store: none lost, file valid`, async () => {
    const {root, paths} = tempProject()
    const script = path.join(root, 'writer.mjs')
    writeFileSync(
      script,
      `import {createBead} from ${JSON.stringify(path.join(REPO, 'dist', 'tracker', 'ops.js'))}
import {projectPaths} from ${JSON.stringify(path.join(REPO, 'dist', 'util', 'root.js'))}
const paths = projectPaths(process.argv[2], {})
for (let i = 0; i < ${CREATES}; i++) await createBead(paths, {title: 'w' + process.argv[3] + '-' + i, hook: false}, {})
`,
    )
    const results = await Promise.all(Array.from({length: WRITERS}, (_, w) => runNode(script, [root, String(w)])))
    for (const r of results) expect([r.code, r.stderr]).toEqual([0, ''])
    const text = readFileSync(paths.file, 'utf8')
    const snap = parseTracker(text, paths.file)
    expect(snap.beads).toHaveLength(WRITERS * CREATES)
    expect(new Set(snap.beads.map((b) => b.title)).size).toBe(WRITERS * CREATES)
    expect(serializeTracker(snap.beads)).toBe(text)
  })

  it(`CLI level: ${CLI_LANES} x ${CLI_CREATES} parallel \`tracker create\`: none lost`, async () => {
    const {root, paths} = tempProject()
    const jobs: Promise<{code: number | null}>[] = []
    for (let w = 0; w < CLI_LANES; w++) {
      jobs.push(
        (async () => {
          for (let i = 0; i < CLI_CREATES; i++) {
            const r = await helixAsync(root, ['tracker', 'create', `c${w}-${i}`], {HELIX_LOCK_TIMEOUT: '60'})
            if (r.code !== 0) return {code: r.code}
          }
          return {code: 0}
        })(),
      )
    }
    expect((await Promise.all(jobs)).map((r) => r.code)).toEqual(Array(CLI_LANES).fill(0))
    expect(parseTracker(readFileSync(paths.file, 'utf8'), paths.file).beads).toHaveLength(CLI_LANES * CLI_CREATES)
  })
})
