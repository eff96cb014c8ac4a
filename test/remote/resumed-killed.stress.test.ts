// SPEC 20.2 across two crashes (session 35's kill soak): a --remote host killed before its
// landing push is restarted; the restart adopts the closed attempt (its claim renewed, now
// under the restart's run id) and is killed at the same point. The third run used to judge
// the claim "taken over by another run" (the attempt's record still named the first run):
// the finished work went to a preserved ref and, once the claim expired, the agent did the
// bead again. Now the adoption records the run that holds the claim, and the third run
// finishes the attempt without the agent. Two kills of the built CLI and leases: stress-only.
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {makeTempDir} from '../support/tmp.js'
import {bead, g, makeFleet} from './helpers.js'
import {events, fleetProblems, startHost, tipBeads} from './fleet-harness.js'

const itFull = STRESS_FULL ? it : it.skip

/** a `git` that kill -9s its parent (helix) on each of the first `times` `push --atomic` */
function gitShim(times: number): {bin: string; count: string} {
  const dir = makeTempDir('helix-git-shim-')
  const real = spawnSync('sh', ['-c', 'command -v git'], {encoding: 'utf8'}).stdout.trim()
  const count = path.join(dir, 'count')
  writeFileSync(count, '')
  const bin = path.join(dir, 'bin')
  mkdirSync(bin)
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh
case " $* " in
  *" push "*"--atomic"*)
    if [ $(wc -c < '${count}') -lt ${times} ]; then printf x >> '${count}'; kill -9 "$PPID"; sleep 5; exit 1; fi ;;
esac
exec '${real}' "$@"
`,
  )
  chmodSync(path.join(bin, 'git'), 0o755)
  return {bin, count}
}

describe('a --remote host killed twice before its landing push', () => {
  itFull('the second restart still finishes the attempt: the agent runs once', async () => {
    const f = makeFleet([bead('b1')])
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('hA')
    const shim = gitShim(2)
    const args = ['--workers', '2', '--lease', '10']
    const env = {PATH: `${shim.bin}:${process.env.PATH ?? ''}`, FLEET_SLEEP_MS: '50'}
    const first = startHost(dir, 'hA', log, args, env)
    await first.done
    const second = startHost(dir, 'hA', log, args, env)
    await second.done
    expect(readFileSync(shim.count, 'utf8'), first.out() + second.out()).toBe('xx')
    expect(second.out(), first.out() + '\n---\n' + second.out()).toMatch(/resuming b1 attempt 1 after a crash/)

    const third = startHost(dir, 'hA', log, args)
    expect(await third.done, third.out()).toBe(0)
    const out = third.out()
    expect(out).toMatch(/resuming b1 attempt 1 after a crash/)
    expect(out).not.toMatch(/took its claim over|took over the expired claim/)
    expect(events(log).filter((e) => e.event === 'start'), out).toHaveLength(1)
    expect(fleetProblems(f.bare, ['b1'], log, 10_000), out).toEqual([])
    expect(tipBeads(f.bare).map((b) => b.status)).toEqual(['closed'])
    expect(g(dir, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
  }, 120_000)
})
