import {existsSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {sha, tempProject, oneLineError} from './helpers.js'

// helix tracker's refusals run in-process (test/support/in-process.ts): each one's line, its
// exit code and an untouched tracker, without a node start per case. The same refusals as
// the shell sees them — one per exit code and per way in (the fast path for show and close,
// oclif's parser, a held lock) — stay in cli-errors.e2e.test.ts.

describe('helix tracker: bad input changes nothing (in-process)', () => {
  const body = '{"id":"hx-1","title":"one"}\n{"dependencies":[{"issue_id":"hx-2","depends_on_id":"hx-1","type":"blocks"}],"id":"hx-2","title":"two"}\n'
  const cases: Array<[string, string[], number, RegExp | string]> = [
    ['unknown id (show)', ['tracker', 'show', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['unknown id (update)', ['tracker', 'update', 'hx-9', '--title', 'x'], 1, 'helix: bead hx-9 not found'],
    ['unknown id (close)', ['tracker', 'close', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['priority 7 (create)', ['tracker', 'create', 'x', '--priority', '7'], 1, "helix: invalid priority '7' (expected an integer 0-4)"],
    ['priority 7 (update)', ['tracker', 'update', 'hx-1', '--priority', '7'], 1, "helix: invalid priority '7' (expected an integer 0-4)"],
    ['blank title', ['tracker', 'create', '   '], 1, 'helix: title must not be blank'],
    ['unknown flag', ['tracker', 'create', 'x', '--bogus'], 1, /^helix: Nonexistent flag: --bogus \('helix tracker create --help' lists them\)$/],
    ['missing arg', ['tracker', 'show'], 1, 'helix: missing required argument: id (usage: helix tracker show <id>)'],
    ['missing args', ['tracker', 'dep', 'add'], 1, 'helix: missing required arguments: id, depends-on (usage: helix tracker dep add <id> <depends-on>)'],
    ['missing required flag', ['tracker', 'import'], 1, "helix: missing required flag --from ('helix tracker import --help' says what it takes)"],
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
    ['bad execution-eligible', ['tracker', 'create', 'x', '--execution-eligible', 'maybe'], 1, "helix: invalid --execution-eligible 'maybe': expected true or false"],
    ['list: a status no bead has and helix does not know', ['tracker', 'list', '--status', 'in-progress'], 1, "helix: invalid --status 'in-progress': expected one of open, in_progress, closed, blocked, proposed, cancelled"],
  ]
  // one project for all the cases: a refusal leaves the tracker as it was, which each case checks
  const {root, paths} = tempProject(body)
  const h = sha(paths.file)
  for (const [name, args, code, msg] of cases) {
    it(name, async () => {
      oneLineError(await helix(root, args), code, msg)
      expect(sha(paths.file)).toBe(h)
      expect(existsSync(paths.lockDir)).toBe(false)
    })
  }

  it('a malformed tracker stops every reading command with file:line and is not touched', async () => {
    const {root, paths} = tempProject('{"id":"hx-1","title":"one"}\n{"id": broken\n')
    const h = sha(paths.file)
    const msg = `helix: ${paths.file}:2: malformed bead (invalid JSON`
    for (const args of [['tracker', 'ready'], ['tracker', 'status', '--json'], ['tracker', 'list'], ['tracker', 'show', 'hx-1'], ['tracker', 'blocked'], ['tracker', 'update', 'hx-1', '--title', 'x'], ['tracker', 'create', 'x']]) {
      const r = await helix(root, args)
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1)
      expect(r.stderr.startsWith(msg)).toBe(true)
      expect(r.stderr.trim().endsWith("— run 'helix tracker doctor' to inspect or repair")).toBe(true)
    }
    expect(sha(paths.file)).toBe(h)
  })
})
