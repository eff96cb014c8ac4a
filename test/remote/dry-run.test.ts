// `helix run --dry-run --remote origin` previews the remote's queue, not the local tracker
// (SPEC 19.2 step 1): the bead the fetched tip closed and the bead another host holds a
// live claim on are not picked; nothing is claimed, registered or written. In-process
// (test/support/in-process.ts): what the preview prints and leaves on disk.
import {spawnSync} from 'node:child_process'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {bead, g, gitTestEnv, makeFleet, remoteRefs} from './helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

// the commands' module graph is transformed before any test's clock starts (minutes at load 30)
beforeAll(async () => {
  await import('../../src/commands/run.js')
  await import('../../src/cli/run-loop.js')
  await import('../../src/app/remote-wiring.js')
}, 300_000)

describe('run --dry-run --remote', () => {
  it('picks from the fetched tip with live claims honoured, and changes nothing', async () => {
    const f = makeFleet([bead('hx-1', {priority: 0}), bead('hx-2', {priority: 1}), bead('hx-3', {priority: 2})])
    dirs.push(f.dir)
    const host = f.clone('host-a')
    // after the clone, another host closed hx-1 on the remote ...
    const other = f.clone('host-z')
    const file = path.join(other, '.ddx', 'beads.jsonl')
    writeFileSync(file, readFileSync(file, 'utf8').replace('"id":"hx-1","title":"task hx-1","status":"open"', '"id":"hx-1","title":"task hx-1","status":"closed"'))
    g(other, 'commit', '-q', '-am', 'close hx-1')
    g(other, 'push', '-q', 'origin', 'main')
    // ... and holds a live claim on hx-2
    const now = Date.now()
    const msg = JSON.stringify({host: 'host-z', run: 'host-z:1:x', pid: 1, attempt: 1, claimed_at: new Date(now).toISOString(), expires_at: new Date(now + 3_600_000).toISOString()})
    const empty = g(f.bare, 'hash-object', '-t', 'tree', '-w', '/dev/null')
    const claim = g(f.bare, '-c', 'user.name=z', '-c', 'user.email=z@example.com', 'commit-tree', '-m', msg, empty)
    g(f.bare, 'update-ref', 'refs/helix/claims/hx-2', claim)
    const before = readFileSync(path.join(host, '.ddx', 'beads.jsonl'), 'utf8')

    const r = await helixInProcess(host, ['run', '--dry-run', '--remote', 'origin', '--agent', 'true'], GIT_ISOLATION)
    expect(r.code, r.stderr).toBe(0)
    const prompt = r.stdout.slice(r.stdout.indexOf('--- prompt ---'))
    expect(prompt).toContain('hx-3')
    expect(prompt).not.toMatch(/\bhx-1\b|\bhx-2\b/)
    // nothing claimed or written: the local tracker, the remote's refs, the merge driver config
    expect(remoteRefs(f.bare)).toEqual(['refs/helix/claims/hx-2'])
    expect(readFileSync(path.join(host, '.ddx', 'beads.jsonl'), 'utf8')).toBe(before)
    expect(spawnSync('git', ['config', 'merge.helix-beads.driver'], {cwd: host, env: gitTestEnv}).status).toBe(1)
  }, 120_000)
})
