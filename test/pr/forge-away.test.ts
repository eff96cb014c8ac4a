// A forge that does not answer (SPEC 20.1, 20.5): a gh or --pr-command that hangs is stopped after
// its time, and a gh that says it opened a pull request without naming one; both are a forge that
// did not answer (forgeAway), so the landing waits with the claim and worktree and asks again (a
// second create finds the open pull request) instead of preserving the attempt and counting it
// against the bead, and an auto-merge request is asked again at the next look instead of dropped.
import {chmodSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {commandForge} from '../../src/forge/command.js'
import {ghForge} from '../../src/forge/gh.js'
import {forgeAway} from '../../src/forge/types.js'
import {createAutoMerge} from '../../src/landing/pr-shared.js'
import {errorMessage} from '../../src/util/errors.js'
import {makeTempDir} from '../support/tmp.js'

function script(body: string): string {
  const file = path.join(makeTempDir('helix-forge-away-'), 'forge')
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}

const reason = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
  } catch (error) {
    return errorMessage(error)
  }
  throw new Error('expected a failure')
}

const input = {base: 'main', head: 'helix/hx-1', title: 'hx-1: t', body: 'b'}

describe('a forge that does not answer', () => {
  it('gh hanging in pr create and pr merge --auto: stopped after its time, and a forge away, not a refusal of the bead', async () => {
    // prints a line first (gh's progress words) and then hangs: the reason must still say it did not answer
    const forge = ghForge({cwd: process.cwd(), env: process.env, bin: script('echo "Creating pull request for helix/hx-1 into main" >&2\nexec sleep 60'), timeoutMs: 300})
    const create = await reason(forge.create(input))
    expect(create).toMatch(/^gh pr create failed: .*did not answer within 0\.3s/)
    expect(forgeAway(create)).toBe(true)
    const merge = await reason(forge.mergeAuto('https://forge.test/team/repo/pull/1', 'squash'))
    expect(forgeAway(merge)).toBe(true)
    // --pr-auto-merge keeps the request for the next look instead of leaving it to a person
    const lines: string[] = []
    const auto = createAutoMerge({forge, method: 'squash', log: (l) => lines.push(l)})
    await auto.request('https://forge.test/team/repo/pull/1')
    expect(auto.due()).toEqual(['https://forge.test/team/repo/pull/1'])
    expect(lines.join('\n')).toMatch(/could not be reached to auto-merge .*asked again at the next look/)
  })

  it('gh pr create exiting 0 without a pull request URL (a proxy page) is asked again, not held against the bead', async () => {
    const forge = ghForge({cwd: process.cwd(), env: process.env, bin: script('echo "<html><body>502 Bad Gateway</body></html>" | tr -d "0-9"')})
    const why = await reason(forge.create(input))
    expect(why).toMatch(/^gh pr create did not answer with a pull request's URL: /)
    expect(forgeAway(why)).toBe(true)
  })

  it('a --pr-command adapter hanging in create is a forge away too', async () => {
    const forge = commandForge(script('cat > /dev/null\nexec sleep 60'), {cwd: process.cwd(), env: process.env, timeoutMs: 300})
    const why = await reason(forge.create(input))
    expect(why).toMatch(/did not answer within 0\.3s/)
    expect(forgeAway(why)).toBe(true)
  })

  it('a refusal or a plain failure stays what it was', async () => {
    const denied = ghForge({cwd: process.cwd(), env: process.env, bin: script('echo "pull request create failed: GraphQL: Head ref must be a branch (createPullRequest)" >&2\nexit 1')})
    expect(forgeAway(await reason(denied.create(input)))).toBe(false)
  })
})
