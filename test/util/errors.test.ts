import {describe, expect, it} from 'vitest'
import {fsErrorWords, helixMessage} from '../../src/util/errors.js'
import {parseErrorLine, suggestFlag, usageLine} from '../../src/cli/base-command.js'

describe('helixMessage', () => {
  it('adds the prefix unless the message already names helix or a helix command', () => {
    expect(helixMessage('helix: x')).toBe('helix: x')
    expect(helixMessage('helix run: already running (pid=1, started=t)')).toBe('helix run: already running (pid=1, started=t)')
    expect(helixMessage("helix tracker dep add: unexpected argument 'x'")).toBe("helix tracker dep add: unexpected argument 'x'")
    expect(helixMessage('helix-0a1b is closed; leaving it closed')).toBe('helix: helix-0a1b is closed; leaving it closed')
    expect(helixMessage('helixfoo')).toBe('helix: helixfoo')
    expect(helixMessage('bead x not found')).toBe('helix: bead x not found')
  })
})

describe('parseErrorLine (oclif parse errors as one line)', () => {
  it('folds header-only first lines into the problem they announce', () => {
    expect(parseErrorLine({message: 'The following error occurred:\n  \u001b[2mMissing required flag from\u001b[22m\nSee more help with --help'})).toBe('Missing required flag from')
    expect(parseErrorLine({message: 'The following errors occurred:\n  a\n  b\nSee more help with --help'})).toBe('a; b')
    expect(parseErrorLine({message: 'Missing 2 required args:\nid  bead id\nx\nSee more help with --help', args: [{name: 'id'}, {name: 'depends-on'}]})).toBe('missing required arguments: id, depends-on')
    expect(parseErrorLine({message: 'Nonexistent flag: --bogus\nSee more help with --help'})).toBe('Nonexistent flag: --bogus')
    expect(parseErrorLine({message: 'Parsing --max-cycles \n\tExpected an integer but received: abc\nSee more help with --help'})).toBe("invalid --max-cycles 'abc': expected a whole number")
    expect(parseErrorLine({message: 'Parsing --max-cycles \n\tExpected an integer greater than or equal to 0 but received: -1'})).toBe("invalid --max-cycles '-1': expected a whole number ≥ 0")
    expect(parseErrorLine({message: 'Parsing --port \n\tExpected an integer less than or equal to 9 but received: 12'})).toBe("invalid --port '12': expected a whole number ≤ 9")
    expect(parseErrorLine({message: 'Parsing --land \n\tExpected --land=ff but received: x'})).toBe('invalid --land: Expected --land=ff but received: x')
  })
})

describe('bad input in words: an empty number, a missing argument', () => {
  it('a file system error is said in words, not as its errno code', () => {
    expect(fsErrorWords(Object.assign(new Error("EISDIR: illegal operation on a directory, read"), {code: 'EISDIR'}))).toBe('it is a directory')
    expect(fsErrorWords(Object.assign(new Error("EACCES: permission denied, open '/x'"), {code: 'EACCES'}))).toBe('permission denied')
    expect(fsErrorWords(new Error('something else'))).toBe('something else')
  })

  it("an empty whole-number flag is named like any bad value, not in oclif's words", () => {
    // oclif's line ends in 'received: ' and is trimmed to 'received:'
    expect(parseErrorLine({message: 'Parsing --max-cycles \n\tExpected an integer but received: \nSee more help with --help'})).toBe("invalid --max-cycles '': expected a whole number")
  })

  it("a flag given twice, or a value outside its options, in helix's words", () => {
    expect(parseErrorLine({message: 'Flag --max-cycles can only be specified once\nSee more help with --help'})).toBe('--max-cycles is given more than once; give it once')
    expect(parseErrorLine({message: 'Expected --from=xx to be one of: bd\nSee more help with --help'})).toBe("invalid --from 'xx': expected bd")
  })

  it('a missing argument comes with the usage line that fixes it', () => {
    expect(usageLine('unblock', {id: {required: true}})).toBe('helix unblock <id>')
    expect(usageLine('tracker:dep:add', {id: {required: true}, 'depends-on': {required: true}})).toBe('helix tracker dep add <id> <depends-on>')
    expect(usageLine('logs', {file: {}})).toBe('helix logs [file]')
  })
})

describe('suggestFlag (did you mean, for an unknown flag)', () => {
  const FLAGS = {workers: {}, 'max-cycles': {}, json: {}, color: {allowNo: true}, agent: {char: 'a', aliases: ['runner']}}
  it('names the closest flag as it is written, and nothing when none is close or the flag is a short one', () => {
    expect(suggestFlag('--wokers', FLAGS)).toBe('--workers')
    expect(suggestFlag('--wokers=2', FLAGS)).toBe('--workers')
    expect(suggestFlag('--max-cylces', FLAGS)).toBe('--max-cycles')
    expect(suggestFlag('--no-colr', FLAGS)).toBe('--no-color')
    expect(suggestFlag('--runer', FLAGS)).toBe('--runner')
    expect(suggestFlag('--completely-different', FLAGS)).toBeNull()
    expect(suggestFlag('-w', FLAGS)).toBeNull()
  })
})
