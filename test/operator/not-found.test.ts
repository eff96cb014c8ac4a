import {describe, expect, it} from 'vitest'
import {notFoundLine, suggestCommand, unknownCommandLine} from '../../src/cli/unknown-command.js'
import {editDistance} from '../../src/util/suggest.js'

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

  // what oclif hands the hook: every word that is not a flag folded into one id
  const CONFIG = {commandIDs: ['run', 'status', 'tracker:show', 'tracker:ready', 'tracker:dep:add'], topics: [{name: 'tracker'}, {name: 'tracker:dep'}]}

  it('an unknown subcommand is named without the arguments that followed it', () => {
    expect(notFoundLine(['tracker', 'shwo', 'hx-1'], CONFIG)).toBe("helix: unknown command 'tracker shwo' (did you mean 'tracker show'?)")
    expect(notFoundLine(['tracker', 'dep', 'ad', 'a', 'b'], CONFIG)).toBe("helix: unknown command 'tracker dep ad' (did you mean 'tracker dep add'?)")
    expect(notFoundLine(['stauts'], CONFIG)).toBe("helix: unknown command 'stauts' (did you mean 'status'?)")
    expect(notFoundLine(['zzqqxx', 'more'], CONFIG)).toBe("helix: unknown command 'zzqqxx'; run 'helix help' for the list")
  })

  it('words after a command that takes no arguments are unexpected arguments, not an unknown command', () => {
    expect(notFoundLine(['run', 'extra-arg'], CONFIG)).toBe("helix run: unexpected argument 'extra-arg'")
    expect(notFoundLine(['status', 'a', 'b\u001b[2J'], CONFIG)).toBe("helix status: unexpected arguments 'a', 'b?[2J'")
  })
})
