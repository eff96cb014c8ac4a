// The stub agent's two sides agree (fixtures/agents/README.md): stub-agent.pl answers a
// plain call itself and must do exactly what stub-agent.mjs does with it — the same step
// picked from script.json and the earlier calls, the same bytes on stdout and stderr, the
// same exit code, the same record in calls.jsonl (but `time`) — and hand every other call
// to the node stub unchanged. A case with a list of steps runs twice per side, so the second
// call's step comes from the first call's record (the side's own record format read back);
// the others once (every node start here costs ~50 ms of the suite's CPU).
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
// @ts-expect-error plain ESM fixture without types
import {STUB_AGENT, STUB_PL} from '../../fixtures/agents/install-stubs.mjs'
import {testEnv} from '../support/env.js'
import {tempDir} from '../support/tmp.js'

type As = 'codex' | 'claude' | 'command'

// a stand-in for the built CLI (HELIX_STUB_HELIX): answers on stdout and stderr, exit 3 for the id `bad`
const FAKE_HELIX = `const id = process.argv[4]; console.log('closed ' + id + ' in ' + process.cwd()); if (id === 'bad') { console.error('helix: ' + id + ' "is" not\\there'); process.exit(3) }\n`

function side(dir: string, kind: 'node' | 'perl', as: As, script: unknown, prompt: string, argv: string[], stdin: 'pipe' | 'ignore', calls: number) {
  const root = path.join(dir, kind)
  const stubDir = path.join(root, 'stub')
  const work = path.join(root, 'work')
  mkdirSync(stubDir, {recursive: true})
  mkdirSync(work, {recursive: true})
  if (script !== undefined) writeFileSync(path.join(stubDir, 'script.json'), typeof script === 'string' ? script : JSON.stringify(script))
  const helix = path.join(root, 'helix.cjs')
  writeFileSync(helix, FAKE_HELIX)
  const bin = path.join(root, 'agent')
  writeFileSync(bin, kind === 'perl' ? `#!/bin/sh\nexec perl '${STUB_PL}' '${process.execPath}' '${STUB_AGENT}' ${as} "$@"\n` : `#!/bin/sh\nexec '${process.execPath}' '${STUB_AGENT}' --as ${as} "$@"\n`)
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
  return {runs, calls: records.map(({time, pid, ...rest}): Record<string, unknown> => ({...rest, time: typeof time, pid: typeof pid}))}
}

function twins(as: As, script: unknown, prompt: string, argv: string[] = [], stdin: 'pipe' | 'ignore' = 'pipe', calls = 1) {
  using dir = tempDir()
  return {node: side(dir.path, 'node', as, script, prompt, argv, stdin, calls), perl: side(dir.path, 'perl', as, script, prompt, argv, stdin, calls)}
}

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
  ['handed over: touch', 'claude', {implementation: ['touch:f.txt close']}, impl('hx-1')],
  ['handed over: codex json', 'codex', {implementation: ['json close']}, impl('hx-1'), ['exec', '--json']],
]

describe('stub agent: the perl side answers a plain call as the node stub does', () => {
  it.each(CASES)('%s', (_name, as, script, prompt, argv, calls = 1) => {
    const {node, perl} = twins(as, script, prompt, argv ?? [], 'pipe', calls)
    expect(perl.runs).toEqual(node.runs)
    expect(perl.calls).toEqual(node.calls)
    expect(node.calls).toHaveLength(calls)
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
