// `helix start` forwards the --land pr flags to `helix run` as typed (SPEC 20.5 with start).
import {describe, expect, it} from 'vitest'
import {forwardedRunArgs} from '../../src/operator/control.js'

describe('helix start with --land pr', () => {
  it('forwards the pull-request flags and their values unchanged, --summary once', () => {
    const typed = ['--remote', 'origin', '--land', 'pr', '--pr-auto-merge', 'squash', '--pr-wait', '600', '--pr-poll', '30', '--pr-command', 'forge-adapter --json', '--resolve-attempts', '3', '--summary']
    expect(forwardedRunArgs(typed)).toEqual(typed.slice(0, -1))
    expect(forwardedRunArgs(['--land=pr', '--remote=origin', '--pr-auto-merge=rebase'])).toEqual(['--land=pr', '--remote=origin', '--pr-auto-merge=rebase'])
  })
})
