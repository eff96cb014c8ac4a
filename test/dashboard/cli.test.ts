// `helix dashboard`'s refusals that come before anything listens, in-process
// (test/support/in-process.ts): one line, exit 1, nothing written. A taken port and a real
// start ended by SIGTERM go through the built CLI (cli.e2e.test.ts).
import {existsSync, mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {helixInProcess} from '../support/in-process.js'
import {trackerText} from '../support/project.js'

function project(): string {
  const root = path.join(makeTempDir('helix-dash-cli-'), 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText([{id: 'hx-a', title: 'a bead'}]))
  return root
}

describe('helix dashboard refuses bad input (in-process)', () => {
  it('outside a project, a --project outside one, --listen without a token, a bad --port', async () => {
    const outside = makeTempDir('helix-dash-outside-')
    let r = await helixInProcess(outside, ['dashboard'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("helix: not a helix project (no .ddx/ here or above); run 'helix tracker init' at the project root\n")
    expect(readdirSync(outside)).toEqual([])
    r = await helixInProcess(project(), ['dashboard', '--project', outside])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^helix: --project .*: not a helix project .*\n$/)

    const root = project()
    r = await helixInProcess(root, ['dashboard', '--listen', '0.0.0.0'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('helix: --listen 0.0.0.0 needs --token T (or HELIX_DASHBOARD_TOKEN): every request must carry it\n')
    expect(r.stdout).toBe('')

    r = await helixInProcess(root, ['dashboard', '--port', 'eighty'])
    expect(r.code).toBe(1)
    expect(r.stderr.split('\n')).toHaveLength(2)
    expect(r.stderr).toMatch(/^helix: invalid --port 'eighty'/)
    // the page is read-only: nothing appeared in the project
    expect(existsSync(path.join(root, '.helix'))).toBe(false)
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
  })
})
