import {PassThrough} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {createTerminal} from '../../src/output/terminal.js'
import {FakeLog} from './fakes.js'

function streams() {
  const out = new PassThrough()
  const err = new PassThrough()
  let o = ''
  let e = ''
  out.on('data', (d) => (o += d))
  err.on('data', (d) => (e += d))
  return {out, err, text: () => ({o, e})}
}

describe('terminal output', () => {
  it('normal mode: progress and stop lines on stderr, agent output on stdout, summary lines hidden; all logged', () => {
    const s = streams()
    const t = createTerminal({summary: false, quiet: false, stdout: s.out, stderr: s.err})
    const log = new FakeLog()
    t.attach(log)
    t.normal('helix: n')
    t.summary('helix: s')
    t.both('helix: b')
    t.agent('agent says %s')
    expect(s.text()).toEqual({o: 'agent says %s\n', e: 'helix: n\nhelix: b\n'})
    expect(log.events).toEqual(['helix: n', 'helix: s', 'helix: b'])
  })

  it('summary mode: stdout empty, only summary and stop lines on stderr', () => {
    const s = streams()
    const t = createTerminal({summary: true, quiet: true, stdout: s.out, stderr: s.err})
    t.normal('helix: n')
    t.summary('helix: s')
    t.both('helix: b')
    t.agent('agent')
    expect(s.text()).toEqual({o: '', e: 'helix: s\nhelix: b\n'})
  })

  it('--quiet keeps progress, drops agent output', () => {
    const s = streams()
    const t = createTerminal({summary: false, quiet: true, stdout: s.out, stderr: s.err})
    t.normal('helix: n')
    t.agent('agent')
    expect(s.text()).toEqual({o: '', e: 'helix: n\n'})
  })

  it('a broken stdout/stderr (EPIPE) is absorbed: no throw, later writes skipped', () => {
    const s = streams()
    const t = createTerminal({summary: false, quiet: false, stdout: s.out, stderr: s.err})
    const epipe = Object.assign(new Error('write EPIPE'), {code: 'EPIPE'})
    expect(() => s.out.emit('error', epipe)).not.toThrow()
    expect(() => s.err.emit('error', epipe)).not.toThrow()
    t.agent('after')
    t.both('helix: after')
    expect(s.text()).toEqual({o: '', e: ''})
  })
})

describe('agent output on the terminal (SPEC 13.5, 16.3)', () => {
  it('not a colour terminal: escapes and control characters neutralised', () => {
    const s = streams()
    const t = createTerminal({summary: false, quiet: false, stdout: s.out, stderr: s.err, color: false})
    t.agent('\u001b[31mred\u001b[0m \u001b]0;title\u0007 done\r')
    expect(s.text().o).toBe('?[31mred?[0m ?]0;title? done?\n')
  })
  it('colour terminal: colour codes kept, other escapes neutralised', () => {
    const s = streams()
    const t = createTerminal({summary: false, quiet: false, stdout: s.out, stderr: s.err, color: true})
    t.agent('\u001b[31mred\u001b[0m \u001b]0;title\u0007')
    expect(s.text().o).toBe('\u001b[31mred\u001b[0m ?]0;title?\n')
  })
})
