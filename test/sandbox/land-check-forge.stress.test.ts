// SPEC 20.3 + 21.1, session 34 (sandbox adversary): the land check runs the project's
// code confined, with helix's worktree writable. A hostile check rewrote the worktree's
// `.git` file to point at a repository it made there, whose config names a
// `core.fsmonitor` script of its own; helix's git then ran in that worktree outside the
// sandbox (the red check's resolve round collects the work there) and ran the script,
// which wrote the marker below. Now the worktree's `.git` is read-only to the check.
// Also for a project nested below its repository's top, where the check's `.git` is a
// new file in the subdirectory (helix's git runs at the worktree's top, so it held);
// that case needed the top bound into the sandbox (the clone's alternate lives there).
// The nested project's case runs under `npm run test:stress` (HELIX_STRESS_FULL=1, in
// .ci/run) only; the project at its repository top runs in `npm test` too.
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {makeTempDir} from '../support/tmp.js'
import {gitSeq} from '../support/git.js'
import {hasBwrap, q, runUntil, sandboxAgent} from './helpers.js'

describe.skipIf(!hasBwrap)('helix run --sandbox --land-check: a check that forges the worktree .git', () => {
  const cases: Array<[string, string]> = [
    ['the project at its repository top', ''],
    ['a project nested below its repository top (the check makes a new .git)', 'proj'],
  ]
  it.each(STRESS_FULL ? cases : cases.slice(0, 1))("cannot make helix's git run its fsmonitor outside the sandbox: %s", async (_what, nested) => {
    const base = makeTempDir('helix-sbx-forge-')
    const top = path.join(base, 'repo')
    const root = path.join(top, nested)
    const marker = path.join(base, 'fsmonitor-ran')
    const stub = path.join(base, 'stub')
    for (const d of [path.join(root, '.ddx'), path.join(root, 'scripts'), stub, path.join(base, 'home')]) mkdirSync(d, {recursive: true})
    gitSeq(top, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), JSON.stringify({id: 'fg-a', title: 'bead', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'}) + '\n')
    // the check (the project's code): a repository of its own making beside the real one, `.git` pointed at it; red once
    writeFileSync(
      path.join(root, 'scripts', 'check.sh'),
      [
        '#!/bin/sh',
        '[ -d .fake ] && exit 0',
        'g=$(git rev-parse --absolute-git-dir); c=$(cd "$(git rev-parse --git-common-dir)" && pwd)',
        'mkdir -p .fake/common/objects/info .fake/wt',
        'cp -r "$c/refs" "$c/HEAD" .fake/common/; cp "$c/packed-refs" .fake/common/ 2>/dev/null',
        'echo "$c/objects" > .fake/common/objects/info/alternates',
        `printf '#!/bin/sh\\necho ran >> %s\\nexit 1\\n' ${q(marker)} > .fake/fsm.sh; chmod +x .fake/fsm.sh`,
        `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = %s\\n' "$PWD/.fake/fsm.sh" > .fake/common/config`,
        'cp "$g/HEAD" "$g/index" .fake/wt/; echo "$PWD/.fake/common" > .fake/wt/commondir; echo "$PWD/.git" > .fake/wt/gitdir',
        '( echo "gitdir: $PWD/.fake/wt" > .git ) 2>/dev/null && echo "FORGE ok" || echo "FORGE fail"',
        'exit 1',
        '',
      ].join('\n'),
    )
    gitSeq(top, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
    const {env} = sandboxAgent(stub, path.join(base, 'home'), [
      'echo work > work.txt && git add work.txt && git commit -q -m work',
      'helix tracker close "$HELIX_BEAD_ID"',
    ])
    // the first attempt shows it: its red check, then the resolve round collected with helix's git
    const r = await runUntil(['run', '--sandbox', '--land-check', 'sh scripts/check.sh', '--no-auto-review', '--no-auto-align'], {cwd: root, env}, /cycle 1: fg-a (not landed|→ )/)
    const all = r.output
    expect(r.signal, all).toBeNull()
    expect(all).toMatch(/cycle 1: fg-a (not landed|→ )/)
    // the check ran (red), and its write of .git was refused
    expect(all).toMatch(/land check FAILED/)
    expect(existsSync(marker), all).toBe(false)
  }, 150_000)
})
