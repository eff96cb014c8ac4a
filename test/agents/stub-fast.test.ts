// The stub agent's two sides agree (fixtures/agents/README.md): stub-agent.pl answers a
// plain call itself and must do exactly what stub-agent.mjs does with it — the same step
// picked from script.json and the earlier calls, the same bytes on stdout and stderr, the
// same exit code, the same record in calls.jsonl (but `time`) — and hand every other call
// to the node stub unchanged. A case with a list of steps runs twice per side, so the second
// call's step comes from the first call's record (the side's own record format read back);
// the others once (every node start here costs ~50 ms of the suite's CPU).
import {spawnSync} from 'node:child_process'
import {chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
// @ts-expect-error plain ESM fixture without types
import {STUB_AGENT, STUB_PL} from '../../fixtures/agents/install-stubs.mjs'
import {testEnv} from '../support/env.js'
import {gitEnv, initRepo} from '../support/git.js'
import {tempDir} from '../support/tmp.js'

type As = 'codex' | 'claude' | 'command'

// a stand-in for the built CLI (HELIX_STUB_HELIX): answers on stdout and stderr, exit 3 for the id `bad`
const FAKE_HELIX = `const id = process.argv[4]; console.log('closed ' + id + ' in ' + process.cwd()); if (id === 'bad') { console.error('helix: ' + id + ' "is" not\\there'); process.exit(3) }\n`

/** a work directory made before the calls (a git repository), and what is read back from it after */
interface Work {
  setup(work: string): void
  state(work: string): unknown
}

function side(dir: string, kind: 'node' | 'perl', as: As, script: unknown, prompt: string, argv: string[], stdin: 'pipe' | 'ignore', calls: number, repo?: Work) {
  const root = path.join(dir, kind)
  const stubDir = path.join(root, 'stub')
  const work = path.join(root, 'work')
  mkdirSync(stubDir, {recursive: true})
  // the repository is made once for both sides (a copy each: git's starts cost more than the copy)
  if (repo) cpSync(path.join(dir, 'template'), work, {recursive: true})
  else mkdirSync(work, {recursive: true})
  if (script !== undefined) writeFileSync(path.join(stubDir, 'script.json'), typeof script === 'string' ? script : JSON.stringify(script))
  const helix = path.join(root, 'helix.cjs')
  writeFileSync(helix, FAKE_HELIX)
  const bin = path.join(root, 'agent')
  // with a work directory the perl side must answer alone: its hand-over goes to a script that fails
  const handOver = repo ? path.join(root, 'no-hand-over.mjs') : STUB_AGENT
  if (repo) writeFileSync(handOver, "process.stderr.write('handed over to the node stub\\n'); process.exit(99)\n")
  writeFileSync(bin, kind === 'perl' ? `#!/bin/sh\nexec perl '${STUB_PL}' '${process.execPath}' '${handOver}' ${as} "$@"\n` : `#!/bin/sh\nexec '${process.execPath}' '${STUB_AGENT}' --as ${as} "$@"\n`)
  chmodSync(bin, 0o755)
  const runs = Array.from({length: calls}, () => {
    const args = as === 'codex' ? [...argv, prompt] : argv
    const r = spawnSync(bin, args, {
      cwd: work,
      env: testEnv({HELIX_STUB_DIR: stubDir, HELIX_STUB_HELIX: helix, HELIX_BEAD_ID: 'hx-env', HELIX_ACTION: 'implementation'}),
      input: as === 'codex' || stdin === 'ignore' ? undefined : prompt,
      stdio: [stdin, 'pipe', 'pipe'],
      encoding: 'utf8',
    })
    return {code: r.status, stdout: r.stdout.replaceAll(root, '<root>'), stderr: r.stderr.replaceAll(root, '<root>')}
  })
  let records: Array<Record<string, unknown>> = []
  try {
    records = readFileSync(path.join(stubDir, 'calls.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l.replaceAll(root, '<root>')) as Record<string, unknown>)
  } catch {
    // no record: compared as none on both sides
  }
  return {runs, calls: records.map(({time, pid, ...rest}): Record<string, unknown> => ({...rest, time: typeof time, pid: typeof pid})), work: repo?.state(work)}
}

function twins(as: As, script: unknown, prompt: string, argv: string[] = [], stdin: 'pipe' | 'ignore' = 'pipe', calls = 1, repo?: Work) {
  using dir = tempDir()
  if (repo) {
    mkdirSync(path.join(dir.path, 'template'))
    repo.setup(path.join(dir.path, 'template'))
  }
  return {node: side(dir.path, 'node', as, script, prompt, argv, stdin, calls, repo), perl: side(dir.path, 'perl', as, script, prompt, argv, stdin, calls, repo)}
}

// the work tokens (append-word, touch, commit, resolve-union) in a real repository
const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, {cwd, env: {...gitEnv, GIT_EDITOR: 'true'}, encoding: 'utf8'})
  if (r.status !== 0 && args[0] !== 'rebase') throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}
/** main with shared.txt 'start', the tracker under .ddx (never committed by the stub) */
const REPO_WORK: Work = {
  setup: (work) => {
    writeFileSync(path.join(work, 'shared.txt'), 'start\nsecond line\n')
    mkdirSync(path.join(work, '.ddx'))
    writeFileSync(path.join(work, '.ddx', 'beads.jsonl'), '')
    initRepo(work)
  },
  state: (work) => ({
    log: git(work, 'log', '--format=%s', 'HEAD'),
    // every committed file with its blob: the contents compared, not only the names
    tree: git(work, 'ls-tree', '-r', 'HEAD'),
    shared: readFileSync(path.join(work, 'shared.txt'), 'utf8'),
    status: git(work, 'status', '--porcelain'),
  }),
}
/** a rebase of a branch that appended 'b' onto main that appended 'a' and 'c', stopped on the conflict in shared.txt */
const REBASE_WORK: Work = {
  setup: (work) => {
    REPO_WORK.setup(work)
    git(work, 'checkout', '-q', '-b', 'side')
    writeFileSync(path.join(work, 'shared.txt'), 'start b\nsecond line\n')
    git(work, 'commit', '-q', '-am', 'b')
    git(work, 'checkout', '-q', 'main')
    writeFileSync(path.join(work, 'shared.txt'), 'start a c\nsecond line\n')
    git(work, 'commit', '-q', '-am', 'a c')
    git(work, 'checkout', '-q', 'side')
    git(work, 'rebase', '-q', 'main')
    if (!readFileSync(path.join(work, 'shared.txt'), 'utf8').includes('<<<<<<< ')) throw new Error('the rebase did not stop on a conflict')
  },
  state: (work) => ({...(REPO_WORK.state(work) as object), rebasing: existsSync(path.join(work, '.git', 'rebase-merge')) || existsSync(path.join(work, '.git', 'rebase-apply'))}),
}
const resolvePrompt = 'HELIX resolve action for the project at /x\nResolve target: hx-1\n'

const impl = (id: string) => `HELIX implementation action\nImplementation target: ${id}\nsome "quoted" \\ text,\ta tab, \u0001, é, 😀\n`
const CASES: Array<[string, As, unknown, string, string[]?, number?]> = [
  ['the default close (codex, with -m and an effort)', 'codex', undefined, impl('hx-1'), ['exec', '-m', 'gpt-x', '-c', 'reasoning.effort=high']],
  ['the default close (claude)', 'claude', {}, impl('hx-1')],
  ['per-bead lists, tokens, exit; a close the CLI refuses', 'claude', {implementation: {'bad': ['tokens:99 close', 'exit:3'], default: ['noop']}}, impl('bad'), [], 2],
  ['a close the CLI refuses (command)', 'command', {implementation: ['tokens:1500000 close print:x exit:7']}, impl('bad')],
  ['check: the list steps on, then repeats', 'command', {check: ['next:BUILD', 'next:STOP']}, 'HELIX check action\n', [], 2],
  ['review: CLEAN, print in the array form', 'codex', {review: [['print:a b', 'print:c', 'review:CLEAN', 'tokens:1234567']]}, 'HELIX fresh-eyes review\n'],
  ['a non-ASCII step from \\u escapes', 'claude', '{"check": "next:\\u00e9X print:\\ud83d\\ude00 \\"q\\""}', 'HELIX check action\n'],
  ['no prompt, the action from HELIX_ACTION; an unreadable script', 'command', 'not json', ''],
  // handed over to the node stub: a token the perl side does not run, a non-string step
  ['handed over: stderr', 'claude', {implementation: ['stderr:oops close']}, impl('hx-1')],
  ['handed over: touch without a file', 'command', {implementation: ['touch']}, impl('hx-1')],
  ['handed over: codex json', 'codex', {implementation: ['json close']}, impl('hx-1'), ['exec', '--json']],
]

describe('stub agent: the perl side answers a plain call as the node stub does', () => {
  it.each(CASES)('%s', (_name, as, script, prompt, argv, calls = 1) => {
    const {node, perl} = twins(as, script, prompt, argv ?? [], 'pipe', calls)
    expect(perl.runs).toEqual(node.runs)
    expect(perl.calls).toEqual(node.calls)
    expect(node.calls).toHaveLength(calls)
  })

  const WORK_CASES: Array<[string, As, unknown, string, Work]> = [
    ['append-word, touch, commit, close (command)', 'command', {implementation: 'append-word:shared.txt touch:red.txt commit close'}, impl('hx-1'), REPO_WORK],
    ['append-word to a new file, commit (claude)', 'claude', {implementation: ['append-word:new.txt commit']}, impl('hx-1'), REPO_WORK],
    ['touch, commit (codex)', 'codex', {implementation: 'touch:red.txt commit'}, impl('hx-1'), REPO_WORK],
    ['resolve-union, the default resolve (claude)', 'claude', undefined, resolvePrompt, REBASE_WORK],
    ['resolve-union (codex)', 'codex', {resolve: 'resolve-union'}, resolvePrompt, REBASE_WORK],
    ['resolve-union (command)', 'command', {resolve: ['resolve-union']}, resolvePrompt, REBASE_WORK],
  ]
  it.each(WORK_CASES)('work tokens: %s', (_name, as, script, prompt, work) => {
    const {node, perl} = twins(as, script, prompt, [], 'pipe', 1, work)
    expect(perl.runs).toEqual(node.runs)
    expect(perl.calls).toEqual(node.calls)
    expect(perl.work).toEqual(node.work)
    expect(node.calls).toHaveLength(1)
    // the twins did the work (so equal is not equally nothing)
    const w = node.work as {log: string; rebasing?: boolean; shared: string}
    if (work === REBASE_WORK) expect([w.rebasing, w.shared, w.log.split('\n')[0]]).toEqual([false, 'start a c b\nsecond line\n', 'b'])
    else expect(w.log.split('\n')[0]).toBe('hx-1: stub work')
  })

  it('stdin that is /dev/null is recorded as devnull, and --version is answered without a record', () => {
    const {node, perl} = twins('claude', undefined, '', [], 'ignore')
    expect(perl.calls).toEqual(node.calls)
    expect(node.calls[0]?.stdin).toBe('devnull')
    for (const as of ['codex', 'claude'] as const) {
      const v = as === 'codex' ? twins(as, undefined, '--version') : twins(as, undefined, '', ['--version'])
      expect(v.perl.runs).toEqual(v.node.runs)
      expect(v.node.calls).toEqual([])
    }
  })
})
