import {describe, expect, it} from 'vitest'
import {editDistance, suggestCommand, unknownCommandLine} from '../../src/cli/unknown-command.js'

const KNOWN = ['status', 'start', 'stop', 'next', 'report', 'run', 'tracker', 'tracker ready', 'tracker status', 'unblock']

describe('unknown command suggestions', () => {
  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('stauts', 'status')).toBe(1)
    expect(editDistance('stauts', 'start')).toBe(2)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('same', 'same')).toBe(0)
  })

  it('suggests the nearest command or topic, and nothing when none is close', () => {
    expect(suggestCommand('stauts', KNOWN)).toBe('status')
    expect(suggestCommand('tracker redy', KNOWN)).toBe('tracker ready')
    expect(suggestCommand('unblok', KNOWN)).toBe('unblock')
    expect(suggestCommand('trakcer', KNOWN)).toBe('tracker')
    expect(suggestCommand('completely-different', KNOWN)).toBeNull()
  })

  it('the line sanitizes what was typed', () => {
    expect(unknownCommandLine('st\u001b[2Jatus', KNOWN)).toBe("helix: unknown command 'st?[2Jatus'; run 'helix help' for the list")
    expect(unknownCommandLine('stauts', KNOWN)).toBe("helix: unknown command 'stauts' (did you mean 'status'?)")
  })
})
