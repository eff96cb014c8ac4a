import {existsSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {acquireTrackerLock} from '../../src/tracker/store.js'
import {helix, helixAsync, sha, tempProject, oneLineError} from './helpers.js'

// helix tracker through the built CLI, part 2 of 3: bad input changes nothing.

describe('helix tracker: bad input changes nothing', () => {
  const body = '{"id":"hx-1","title":"one"}\n{"dependencies":[{"issue_id":"hx-2","depends_on_id":"hx-1","type":"blocks"}],"id":"hx-2","title":"two"}\n'
  const cases: Array<[string, string[], number, RegExp | string]> = [
    ['unknown id (show)', ['tracker', 'show', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['unknown id (update)', ['tracker', 'update', 'hx-9', '--title', 'x'], 1, 'helix: bead hx-9 not found'],
    ['unknown id (close)', ['tracker', 'close', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['priority 7 (create)', ['tracker', 'create', 'x', '--priority', '7'], 1, "helix: invalid priority '7' (expected an integer 0-4)"],
    ['priority 7 (update)', ['tracker', 'update', 'hx-1', '--priority', '7'], 1, "helix: invalid priority '7' (expected an integer 0-4)"],
    ['blank title', ['tracker', 'create', '   '], 1, 'helix: title must not be blank'],
    ['unknown flag', ['tracker', 'create', 'x', '--bogus'], 1, /^helix: Nonexistent flag: --bogus/],
    ['missing arg', ['tracker', 'show'], 1, 'helix: missing required argument: id'],
    ['missing args', ['tracker', 'dep', 'add'], 1, 'helix: missing required arguments: id, depends-on'],
    ['missing required flag', ['tracker', 'import'], 1, 'helix: Missing required flag from'],
    ['unknown dep', ['tracker', 'create', 'x', '--deps', 'hx-1,hx-404'], 1, "helix: unknown dependency 'hx-404'"],
    ['unknown parent', ['tracker', 'create', 'x', '--parent', 'hx-404'], 1, "helix: unknown parent 'hx-404'"],
    ['dep cycle', ['tracker', 'dep', 'add', 'hx-1', 'hx-2'], 1, 'helix: dependency cycle: hx-1 -> hx-2 -> hx-1'],
    ['dep self', ['tracker', 'dep', 'add', 'hx-1', 'hx-1'], 1, 'helix: hx-1 cannot depend on itself'],
    ['dep unknown', ['tracker', 'dep', 'add', 'hx-1', 'hx-404'], 1, 'helix: bead hx-404 not found'],
    ['nothing to update', ['tracker', 'update', 'hx-1'], 1, 'helix: nothing to update'],
    ['bad status', ['tracker', 'update', 'hx-1', '--status', 'done'], 1, /^helix: invalid status 'done'/],
    ['close with open dep', ['tracker', 'close', 'hx-2'], 1, 'helix: cannot close hx-2: dependencies not closed: hx-1'],
    ['claim blocked', ['tracker', 'update', 'hx-2', '--claim'], 3, 'helix: cannot claim hx-2: waiting on dependencies hx-1'],
    ['bad --set', ['tracker', 'update', 'hx-1', '--set', 'novalue'], 1, "helix: invalid --set 'novalue' (expected key=value)"],
    ['set id', ['tracker', 'update', 'hx-1', '--set', 'id=x'], 1, 'helix: cannot set id'],
    ['set status', ['tracker', 'update', 'hx-1', '--set', 'status=closed'], 1, 'helix: use --status (or --claim/--unclaim) to change status'],
    ['reopen open', ['tracker', 'reopen', 'hx-1'], 1, /^helix: cannot reopen hx-1: it is open/],
    ['bad execution-eligible', ['tracker', 'create', 'x', '--execution-eligible', 'maybe'], 1, /^helix: Expected --execution-eligible=maybe to be one of/],
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
    for (const args of [['tracker', 'ready'], ['tracker', 'status', '--json'], ['tracker', 'list'], ['tracker', 'show', 'hx-1'], ['tracker', 'blocked'], ['tracker', 'update', 'hx-1', '--title', 'x'], ['tracker', 'create', 'x']]) {
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
