// --pr-auto-merge (SPEC 20.5): the request is made when a pull request opens; a forge that could
// not be reached is asked again at the sweep's next looks until it answers (said once); any other
// refusal leaves the pull request for a person, said once, never asked again.
import {describe, expect, it} from 'vitest'
import {createAutoMerge} from '../../src/landing/pr-shared.js'
import type {MergeMethod} from '../../src/forge/types.js'

function forge(answers: Array<string | null>) {
  const calls: Array<[string, MergeMethod]> = []
  return {
    calls,
    name: 'gh',
    async mergeAuto(url: string, method: MergeMethod) {
      calls.push([url, method])
      const a = answers.shift() ?? null
      if (a !== null) throw new Error(a)
    },
  }
}

describe('createAutoMerge', () => {
  it('asks again at each look while gh cannot be reached, says so once, and stops asking once it answers', async () => {
    const f = forge(['gh pr merge failed: error connecting to api.github.com', 'gh pr merge failed: Post "https://api.github.com/graphql": dial tcp: i/o timeout', null])
    const lines: string[] = []
    const am = createAutoMerge({forge: f, method: 'squash', log: (l) => lines.push(l)})
    await am.request('https://example.test/pr/1')
    expect(am.due()).toEqual(['https://example.test/pr/1'])
    await am.retry()
    expect(am.due()).toEqual(['https://example.test/pr/1'])
    await am.retry()
    expect(am.due()).toEqual([])
    await am.retry()
    expect(f.calls).toEqual([
      ['https://example.test/pr/1', 'squash'],
      ['https://example.test/pr/1', 'squash'],
      ['https://example.test/pr/1', 'squash'],
    ])
    expect(lines).toEqual([
      'helix: gh could not be reached to auto-merge https://example.test/pr/1 (gh pr merge failed: error connecting to api.github.com); asked again at the next look',
      'helix: asked gh to merge https://example.test/pr/1 once its checks pass (--pr-auto-merge squash)',
    ])
  })

  it('a refusal (auto-merge not allowed) leaves the pull request for a person and is not asked again', async () => {
    const f = forge(['gh pr merge failed: GraphQL: Auto merge is not allowed for this repository (enablePullRequestAutoMerge)'])
    const lines: string[] = []
    const am = createAutoMerge({forge: f, method: 'rebase', log: (l) => lines.push(l)})
    await am.request('https://example.test/pr/2')
    await am.retry()
    expect(f.calls).toHaveLength(1)
    expect(am.due()).toEqual([])
    expect(lines).toEqual(['helix: gh pr merge failed: GraphQL: Auto merge is not allowed for this repository (enablePullRequestAutoMerge) (https://example.test/pr/2); it waits for a person to merge'])
  })

  it('a request that meets a forge away, then a refusal, is said and dropped', async () => {
    const f = forge(['error connecting to api.github.com', 'HTTP 422: Pull request is in clean status'])
    const lines: string[] = []
    const am = createAutoMerge({forge: f, method: 'merge', log: (l) => lines.push(l)})
    await am.request('u3')
    await am.retry()
    await am.retry()
    expect(f.calls).toHaveLength(2)
    expect(am.due()).toEqual([])
    expect(lines[1]).toBe('helix: HTTP 422: Pull request is in clean status (u3); it waits for a person to merge')
  })
})
