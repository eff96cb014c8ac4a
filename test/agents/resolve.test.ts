import {chmodSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {defaultEffort, defaultReviewAgent, resolveAgent, resolveAgentOptions} from '../../src/agents/resolve.js'
import {makeTempDir} from '../support/tmp.js'

function binWith(...names: string[]): string {
  const dir = makeTempDir('helix-bin-')
  for (const n of names) {
    writeFileSync(path.join(dir, n), '#!/bin/sh\n')
    chmodSync(path.join(dir, n), 0o755)
  }
  return dir
}

describe('resolveAgent', () => {
  it('finds codex/claude/commands on PATH', () => {
    const bin = binWith('codex', 'claude', 'my-agent')
    expect(resolveAgent('codex', {PATH: bin})).toEqual({kind: 'codex', name: 'codex', path: path.join(bin, 'codex')})
    expect(resolveAgent('claude', {PATH: bin}).kind).toBe('claude')
    expect(resolveAgent('my-agent', {PATH: bin}).kind).toBe('command')
  })
  it('missing → SPEC message, exit 1', () => {
    const bin = binWith()
    expect(() => resolveAgent('codex', {PATH: bin})).toThrow("agent 'codex' not found on PATH")
    try {
      resolveAgent('codex', {PATH: bin})
    } catch (e) {
      expect((e as {exitCode: number}).exitCode).toBe(1)
    }
  })
  it('a non-executable file on PATH does not count', () => {
    const bin = binWith()
    writeFileSync(path.join(bin, 'codex'), 'x')
    expect(() => resolveAgent('codex', {PATH: bin})).toThrow(/not found on PATH/)
  })
  it('paths: relative to cwd, kind by file name', () => {
    const bin = binWith('claude', 'runner.sh')
    expect(resolveAgent('./runner.sh', {PATH: ''}, bin)).toMatchObject({kind: 'command', path: path.join(bin, 'runner.sh')})
    expect(resolveAgent(path.join(bin, 'claude'), {PATH: ''})).toMatchObject({kind: 'claude'})
    expect(() => resolveAgent('./nope', {PATH: ''}, bin)).toThrow("agent './nope' not found or not executable")
  })
})

describe('defaultReviewAgent', () => {
  it('HELIX_REVIEW_AGENT, else the other agent on PATH, else the implementation agent', () => {
    const both = binWith('codex', 'claude', 'rev')
    const codex = resolveAgent('codex', {PATH: both})
    expect(defaultReviewAgent(codex, {PATH: both}).kind).toBe('claude')
    expect(defaultReviewAgent(codex, {PATH: both, HELIX_REVIEW_AGENT: 'rev'}).name).toBe('rev')
    const only = binWith('codex')
    expect(defaultReviewAgent(resolveAgent('codex', {PATH: only}), {PATH: only})).toMatchObject({kind: 'codex'})
    const cmd = resolveAgent('rev', {PATH: both})
    expect(defaultReviewAgent(cmd, {PATH: both})).toBe(cmd)
  })
})

describe('options', () => {
  it('effort defaults per action', () => {
    expect(['implementation', 'check', 'alignment', 'plan', 'backfill', 'polish', 'review'].map((a) => defaultEffort(a as never))).toEqual(['medium', 'low', 'high', 'high', 'high', 'medium', 'high'])
  })
  it('flags beat env; --claude/--codex beat --agent; timeout validated', () => {
    const bin = binWith('codex', 'claude')
    const env = {PATH: bin, HELIX_AGENT: 'claude', HELIX_MODEL: 'm-env', HELIX_AGENT_TIMEOUT: '60'}
    expect(resolveAgentOptions({}, env)).toMatchObject({agent: {kind: 'claude'}, model: 'm-env', timeoutSec: 60})
    expect(resolveAgentOptions({agent: 'claude', codex: true, model: 'm', timeout: '5'}, env)).toMatchObject({agent: {kind: 'codex'}, model: 'm', timeoutSec: 5})
    expect(resolveAgentOptions({}, {PATH: bin})).toMatchObject({agent: {kind: 'codex'}, timeoutSec: 2700})
    expect(() => resolveAgentOptions({timeout: '0'}, env)).toThrow("invalid --timeout '0'")
    expect(() => resolveAgentOptions({}, {...env, HELIX_AGENT_TIMEOUT: 'x'})).toThrow("invalid HELIX_AGENT_TIMEOUT 'x'")
    expect(() => resolveAgentOptions({claude: true, codex: true}, env)).toThrow(/cannot be used together/)
  })
})
