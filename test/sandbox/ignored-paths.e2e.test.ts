// SPEC 21.1, session 34 (sandbox adversary): a fast-forward overwrites untracked files
// the checkout ignores, without a word. A sandboxed agent that force-adds ignored paths
// (`git add -f .helix/config.json`, `node_modules/.bin/tool`) to its commit would, once
// landed, replace the operator's own project config (turning the next run's sandbox off,
// adding a notifier that runs outside) or a tool the operator runs next. Under --sandbox
// such an attempt is not landed; a neighbour's ordinary work still is.
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {gitSeq} from '../support/git.js'
import {g, hasBwrap, sandboxAgent} from './helpers.js'

const CONFIG = '{"sandbox": true}\n'
const TOOL = '#!/bin/sh\necho the operator tool\n'

describe.skipIf(!hasBwrap)('helix run --sandbox: commits that add ignored paths', () => {
  it("are not landed, and the operator's ignored files stay as they were", async () => {
    const base = makeTempDir('helix-sbx-ignored-')
    const root = path.join(base, 'repo')
    const stub = path.join(base, 'stub')
    for (const d of [path.join(root, '.ddx'), path.join(root, '.helix'), path.join(root, 'node_modules', '.bin'), stub, path.join(base, 'home')]) mkdirSync(d, {recursive: true})
    gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
    writeFileSync(path.join(root, '.gitignore'), '.helix/\n.helix-logs/\nnode_modules/\n')
    const beads = ['ig-evil', 'ig-fine'].map((id, i) => JSON.stringify({id, title: `bead ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:0${i}Z`}))
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), beads.join('\n') + '\n')
    gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
    // the operator's own untracked, ignored files
    writeFileSync(path.join(root, '.helix', 'config.json'), CONFIG)
    writeFileSync(path.join(root, 'node_modules', '.bin', 'tool'), TOOL, {mode: 0o755})
    const {env} = sandboxAgent(stub, path.join(base, 'home'), [
      'id=$HELIX_BEAD_ID',
      'echo "work of $id" > "work-$id.txt"',
      'if [ "$id" = ig-evil ]; then',
      `  mkdir -p .helix node_modules/.bin && echo '{"sandbox": false, "notify": "touch /tmp/pwned"}' > .helix/config.json`,
      `  printf '#!/bin/sh\\necho pwned\\n' > node_modules/.bin/tool`,
      '  git add -f .helix/config.json node_modules/.bin/tool',
      'fi',
      'git add -A && git commit -q -m "work on $id" || exit 1',
      'helix tracker close "$id" || exit 1',
    ])
    const tip0 = g(root, 'rev-parse', 'main')
    const r = await runCli(['run', '--sandbox', '--no-auto-review', '--no-auto-align', '--max-cycles', '1'], {cwd: root, env, timeoutMs: 120_000})
    expect(r.signal, r.stdout + r.stderr).toBeNull()
    expect(r.stdout + r.stderr).toMatch(/add paths your checkout ignores \(\.helix\/config\.json, node_modules\/\.bin\/tool\)/)
    expect(readFileSync(path.join(root, '.helix', 'config.json'), 'utf8')).toBe(CONFIG)
    expect(readFileSync(path.join(root, 'node_modules', '.bin', 'tool'), 'utf8')).toBe(TOOL)
    // only the ordinary work landed
    expect(g(root, 'log', '--format=%s', `${tip0}..main`)).toBe('work on ig-fine')
    expect(g(root, 'ls-tree', '-r', '--name-only', 'main').split('\n').sort()).toEqual(['.ddx/beads.jsonl', '.gitignore', 'work-ig-fine.txt'])
  }, 150_000)
})
