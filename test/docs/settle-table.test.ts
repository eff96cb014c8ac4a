import {readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {TERMINAL_KINDS} from '../../src/loop/attempt-state.js'

// issue 30: docs/run-loop.md's settle table names every terminal state settle() handles, and nothing else.
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

function tableKinds(): string[] {
  const text = readFileSync(path.join(repo, 'docs', 'run-loop.md'), 'utf8')
  const start = text.indexOf('### Settling an attempt')
  expect(start).toBeGreaterThan(-1)
  const rows = text.slice(start).split('\n\n')[2] ?? ''
  return [...new Set(rows.split('\n').map((l) => /^\| `([a-z]+)`/.exec(l)?.[1]).filter((k): k is string => k !== undefined))]
}

describe('the settle table (docs/run-loop.md ↔ attempt-state.ts)', () => {
  it('has a row for every terminal kind and none for a kind that does not exist', () => {
    expect(tableKinds().sort()).toEqual([...TERMINAL_KINDS].sort())
  })
})
