import {existsSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {acquireTrackerLock} from '../../src/tracker/store.js'
import {helix, helixAsync, sha, tempProject, oneLineError} from './helpers.js'

// helix tracker through the built CLI, part 2 of 3: bad input changes nothing, as a shell
// sees it (every refusal's text: cli-errors.test.ts, in-process).

describe('helix tracker: bad input changes nothing', () => {
  const body = '{"id":"hx-1","title":"one"}\n{"dependencies":[{"issue_id":"hx-2","depends_on_id":"hx-1","type":"blocks"}],"id":"hx-2","title":"two"}\n'
  // Every refusal's text runs in-process (cli-errors.test.ts); these are the same refusals as
  // a shell sees them: the fast path (show, close), oclif's parser, and exit 3 and (below) 2.
  const cases: Array<[string, string[], number, RegExp | string]> = [
    ['unknown id (show, fast path)', ['tracker', 'show', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['unknown id (close, fast path)', ['tracker', 'close', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['unknown flag (the parser)', ['tracker', 'create', 'x', '--bogus'], 1, /^helix: Nonexistent flag: --bogus \('helix tracker create --help' lists them\)$/],
    ['claim blocked (exit 3)', ['tracker', 'update', 'hx-2', '--claim'], 3, 'helix: cannot claim hx-2: waiting on dependencies hx-1'],
  ]
  for (const [name, args, code, msg] of cases) {
    it(name, () => {
      const {root, paths} = tempProject(body)
      const h = sha(paths.file)
      oneLineError(helix(root, args), code, msg)
      expect(sha(paths.file)).toBe(h)
      expect(existsSync(paths.lockDir)).toBe(false)
    })
  }

  it('a held lock times out with exit 2 after HELIX_LOCK_TIMEOUT', async () => {
    const {root, paths} = tempProject(body)
    const h = sha(paths.file)
    const lock = await acquireTrackerLock(paths, 1)
    try {
      const r = await helixAsync(root, ['tracker', 'update', 'hx-1', '--title', 'x'], {HELIX_LOCK_TIMEOUT: '1'})
      oneLineError(r, 2, 'helix: tracker is locked by another writer (waited 1s)')
    } finally {
      await lock.release()
    }
    expect(sha(paths.file)).toBe(h)
  })

  it('a malformed tracker stops every reading command with file:line and is not touched', () => {
    const {root, paths} = tempProject('{"id":"hx-1","title":"one"}\n{"id": broken\n')
    const h = sha(paths.file)
    const msg = `helix: ${paths.file}:2: malformed bead (invalid JSON`
    // the fast path and oclif's way in (each reading and writing command: cli-errors.test.ts)
    for (const args of [['tracker', 'show', 'hx-1'], ['tracker', 'ready']]) {
      const r = helix(root, args)
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1)
      expect(r.stderr.startsWith(msg)).toBe(true)
      expect(r.stderr.trim().endsWith("— run 'helix tracker doctor' to inspect or repair")).toBe(true)
    }
    expect(sha(paths.file)).toBe(h)
  })
})
