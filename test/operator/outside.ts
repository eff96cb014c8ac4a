// What the 16.1 tests (surface-project.test.ts in-process, surface-project.e2e.test.ts
// through the built CLI) share: a git repository that is no helix project, and a
// listing of what is on disk, for "nothing on disk changed".
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {makeTempDir} from '../support/tmp.js'

/** a temp dir, removed after the test (test/support/tmp.ts) */
export const temp = (prefix = 'helix-surface-'): string => makeTempDir(prefix)

/** Every path under `dir` (files and directories), sorted: "nothing on disk changed". */
export function tree(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, {withFileTypes: true})) {
      const p = path.join(d, e.name)
      out.push(path.relative(dir, p) + (e.isDirectory() ? '/' : ''))
      if (e.isDirectory() && e.name !== '.git') walk(p)
    }
  }
  walk(dir)
  return out.sort()
}

export const NOT_PROJECT = "helix: not a helix project (no .ddx/ here or above); run 'helix tracker init' at the project root\n"

/** A git repository with no .ddx/ (and a subdirectory), an agent that leaves a marker if it ever runs, and what is on disk. */
export function outside(): {dir: string; sub: string; agent: string; marker: string; before: string[]} {
  const dir = temp()
  spawnSync('git', ['init', '-q'], {cwd: dir})
  const sub = path.join(dir, 'sub')
  mkdirSync(sub)
  const marker = path.join(dir, 'agent-ran')
  const agent = path.join(dir, 'agent.sh')
  writeFileSync(agent, `#!/bin/sh\ntouch '${marker}'\necho COMPLETE\n`)
  chmodSync(agent, 0o755)
  return {dir, sub, agent, marker, before: tree(dir)}
}
