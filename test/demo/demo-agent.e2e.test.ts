// The scripted demo agent, driven directly (no helix run): each action against a
// real copy of the demo project; the agent calls the real built `helix tracker` commands
// (the test's own tracker reads and writes run in-process).
import {spawnSync} from 'node:child_process'
import {cpSync, existsSync, readFileSync, realpathSync, rmSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {testEnv} from '../support/env.js'
import {gitSeq} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'

const REPO = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..'))
const AGENT = path.join(REPO, 'fixtures', 'agents', 'demo-agent.mjs')

let ws: string
let base: string

/** The scrubbed environment (test/support/env.ts). */
const env = testEnv

function git(args: string[]) {
  const r = spawnSync('git', args, {cwd: ws, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

/** The test's own tracker reads and writes run in-process; the agent's `helix tracker` calls are the built CLI. */
function helix(args: string[]) {
  return helixInProcess(ws, args)
}

async function bead(id: string): Promise<Record<string, unknown>> {
  const r = await helix(['tracker', 'show', id, '--json'])
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout)
}

/** Runs the agent in one of its dialects; the prompt goes where that agent kind gets it. */
function agent(prompt: string, dialect: 'command' | 'codex' | 'claude' = 'command', extraEnv: Record<string, string> = {}) {
  const argv =
    dialect === 'codex'
      ? ['--dangerously-bypass-approvals-and-sandbox', 'exec', '-C', ws, '--ephemeral', prompt]
      : dialect === 'claude'
        ? ['-p', '--permission-mode', 'bypassPermissions', '--output-format', 'stream-json', '--verbose']
        : []
  const r = spawnSync(process.execPath, [AGENT, ...argv], {
    cwd: ws,
    encoding: 'utf8',
    env: env(extraEnv),
    input: dialect === 'codex' ? undefined : prompt,
    stdio: [dialect === 'codex' ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  return {rc: r.status, out: r.stdout + r.stderr, stdout: r.stdout}
}

const implPrompt = (id: string) => `HELIX implementation action for the project at ${ws}\nAction document: x.md\nImplementation target: ${id}\n`

// the demo project as a git repository, made once for the file (one git start for its six
// commands); each test works on a copy of it, files and .git, made without a process
let template = ''
beforeAll(() => {
  template = path.join(makeTempDir('helix-demo-agent-template-'), 'strkit')
  cpSync(path.join(REPO, 'fixtures', 'demo'), template, {recursive: true})
  gitSeq(template, ['init', '-q'], ['config', 'user.name', 'test'], ['config', 'user.email', 'test@example.invalid'], ['config', 'commit.gpgsign', 'false'], ['add', '-A'], ['commit', '-q', '-m', 'init'])
})

beforeEach(() => {
  base = makeTempDir('helix-demo-agent-')
  ws = path.join(base, 'strkit')
  cpSync(template, ws, {recursive: true})
})

afterEach(() => {
  rmSync(base, {recursive: true, force: true})
})

describe('demo agent', () => {
  it('implements a bead for real: files, passing test, commit, close', async () => {
    const r = agent(implPrompt('hx-de000002'))
    expect(r.rc, r.out).toBe(0)
    expect(r.out).toContain('[demo-agent] closed hx-de000002')
    expect(r.out).toMatch(/^TOKENS_USED: \d+$/m)
    expect((await bead('hx-de000002')).status).toBe('closed')
    expect(git(['log', '-1', '--format=%s']).trim()).toBe('hx-de000002: Add slugify(text)')
    expect(git(['show', '--name-only', '--format=', 'HEAD']).trim().split('\n').sort()).toEqual(['lib/slugify.js', 'test/slugify.test.js'])
    expect(spawnSync(process.execPath, ['--test'], {cwd: ws}).status).toBe(0)
  })

  it('fails the first wordCount attempt on its own test and succeeds on the retry', async () => {
    const first = agent(implPrompt('hx-de000005'))
    expect(first.rc).toBe(1)
    expect(first.out).toContain('FAILED — not closing hx-de000005')
    expect((await bead('hx-de000005')).status).toBe('open')
    expect(git(['status', '--short'])).toContain('lib/wordCount.js')

    const second = agent(implPrompt('hx-de000005'))
    expect(second.rc, second.out).toBe(0)
    expect(second.out).toContain('found the previous attempt')
    expect((await bead('hx-de000005')).status).toBe('closed')
  })

  it('passes untrusted titles to git and helix as data, never through a shell', async () => {
    const title = `$(touch pwned) "q" 'q' %s \`touch pwned2\``
    const created = await helix(['tracker', 'create', title, '--set', 'demo-recipe=slugify'])
    expect(created.code, created.stderr).toBe(0)
    const id = created.stdout.trim()
    const r = agent(implPrompt(id))
    expect(r.rc, r.out).toBe(0)
    expect(git(['log', '-1', '--format=%s']).trim()).toBe(`${id}: ${title}`)
    expect(existsSync(path.join(ws, 'pwned'))).toBe(false)
    expect(existsSync(path.join(ws, 'pwned2'))).toBe(false)
  })

  it('check answers BUILD while work is ready and STOP once the queue is empty', async () => {
    const build = agent('HELIX check action for the project\n')
    expect(build.rc).toBe(0)
    expect(build.out.trim().split('\n').filter((l) => l.startsWith('NEXT_ACTION:'))).toEqual(['NEXT_ACTION: BUILD'])

    for (const id of ['hx-de000002', 'hx-de000003', 'hx-de000004', 'hx-de000005', 'hx-de000001', 'hx-de000006']) {
      expect((await helix(['tracker', 'close', id])).code).toBe(0)
    }
    const stop = agent('HELIX check action for the project\n')
    expect(stop.out.trim().split('\n').filter((l) => l.startsWith('NEXT_ACTION:'))).toEqual(['NEXT_ACTION: STOP'])
  })

  it('review of slugify files one review-finding bead, once; other reviews are clean (codex dialect)', async () => {
    const prompt = 'HELIX fresh-eyes review\nReview scope: hx-de000002\n'
    const first = agent(prompt, 'codex')
    expect(first.rc).toBe(0)
    expect(first.out).toMatch(/^REVIEW_STATUS: ISSUES_FOUND$/m)
    expect(first.out).toMatch(/^FINDINGS_FILED: 1$/m)
    expect(first.out).toMatch(/^tokens used\n[\d,]+$/m)
    const findings = JSON.parse((await helix(['tracker', 'list', '--label', 'review-finding', '--json'])).stdout)
    expect(findings).toHaveLength(1)
    expect(findings[0]['demo-recipe']).toBe('slugify-fix')

    const again = agent(prompt, 'codex')
    expect(again.out).toMatch(/^FINDINGS_FILED: 0$/m)
    expect(JSON.parse((await helix(['tracker', 'list', '--label', 'review-finding', '--json'])).stdout)).toHaveLength(1)

    const clean = agent('HELIX fresh-eyes review\nReview scope: hx-de000003\n', 'codex')
    expect(clean.out).toMatch(/^REVIEW_STATUS: CLEAN$/m)
  })

  it('speaks stream-json as claude', () => {
    const r = agent('HELIX check action\n', 'claude')
    expect(r.rc).toBe(0)
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(events[0]).toMatchObject({type: 'system', subtype: 'init'})
    const result = events.at(-1)
    expect(result.type).toBe('result')
    expect(result.result).toContain('NEXT_ACTION: BUILD')
    expect(result.usage.input_tokens + result.usage.output_tokens).toBeGreaterThan(0)
  })

  it('refuses a prompt that names no helix action', () => {
    const r = agent('hello\n')
    expect(r.rc).toBe(1)
    expect(r.out).toContain('I do not recognise this prompt')
    expect(readFileSync(path.join(ws, '.ddx', 'beads.jsonl'), 'utf8')).toBe(readFileSync(path.join(REPO, 'fixtures', 'demo', '.ddx', 'beads.jsonl'), 'utf8'))
  })
})
