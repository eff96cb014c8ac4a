import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
// @ts-expect-error plain ESM fixture without types
import {installStubs} from '../../fixtures/agents/install-stubs.mjs'
import {makeTempDir} from '../support/tmp.js'
import {testEnv} from '../support/env.js'

export {REPO, BIN as CLI} from '../support/cli.js'

export interface StubEnv {
  root: string
  bin: string
  stubDir: string
  env: NodeJS.ProcessEnv
  paths: {codex: string; claude: string; command: string}
  script(s: Record<string, unknown>): void
  calls(): Array<Record<string, any>>
}

/** A temp project with stub codex/claude/agent on PATH and a stub state dir. */
export function stubProject(): StubEnv {
  const base = makeTempDir('helix-agents-')
  const root = path.join(base, 'proj')
  const bin = path.join(base, 'bin')
  const stubDir = path.join(base, 'stub')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  mkdirSync(stubDir, {recursive: true})
  const paths = installStubs(bin)
  // the scrubbed environment (test/support/env.ts: production, a 500 ms kill grace)
  const env = testEnv({PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, HELIX_STUB_DIR: stubDir})
  return {
    root,
    bin,
    stubDir,
    env,
    paths,
    script(s) {
      writeFileSync(path.join(stubDir, 'script.json'), JSON.stringify(s))
    },
    calls() {
      try {
        return readFileSync(path.join(stubDir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
      } catch {
        return []
      }
    },
  }
}

export function readLog(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}
