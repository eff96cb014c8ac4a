// What the sandbox end-to-end tests share: whether bubblewrap can make a sandbox here,
// the rig's git (test/support/git.ts) and shell quoting for the scripted agents.
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {testEnv} from '../support/env.js'
import {startCli} from '../support/cli.js'
import {waitFor} from '../support/wait.js'

export {git as g} from '../support/git.js'

/** bubblewrap is installed and may make a sandbox (the tests skip where it may not) */
export const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0

/** `s` as one single-quoted word of a sh script */
export const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * `helix <args>` until its output matches `until` (or it ends), then SIGTERM: a scenario
 * that shows its point in the first attempt need not run the bead to its fourth. What the
 * run printed, and how it ended (143 after the SIGTERM).
 */
export async function runUntil(args: string[], o: {cwd: string; env: NodeJS.ProcessEnv}, until: RegExp): Promise<{code: number | null; signal: NodeJS.Signals | null; output: string}> {
  const c = startCli(args, {cwd: o.cwd, env: o.env, stdin: 'ignore'})
  await waitFor(() => until.test(c.output) || c.child.exitCode !== null, {timeoutMs: 90_000, what: `${until} in the run's output`})
  if (c.child.exitCode === null) c.child.kill('SIGTERM')
  const r = await c.done
  return {code: r.code, signal: r.signal, output: c.output}
}

/**
 * A scripted agent for a sandboxed run, written to `<dir>/agent` (sh): the check says STOP,
 * every other action but implementation does nothing, implementation runs `lines`. With the
 * environment such a run takes: its own home, that agent, no backoff sleep, and neither the
 * global nor the system git config.
 */
export function sandboxAgent(dir: string, home: string, lines: string[]): {agent: string; env: NodeJS.ProcessEnv} {
  const agent = path.join(dir, 'agent')
  const head = ['#!/bin/sh', 'if [ "$HELIX_ACTION" = check ]; then echo "NEXT_ACTION: STOP"; exit 0; fi', '[ "$HELIX_ACTION" = implementation ] || exit 0']
  writeFileSync(agent, [...head, ...lines, ''].join('\n'), {mode: 0o755})
  const env = testEnv({HOME: home, HELIX_AGENT: agent, HELIX_BACKOFF_SLEEP: '0', GIT_CONFIG_NOSYSTEM: '1'})
  delete env.GIT_CONFIG_GLOBAL
  return {agent, env}
}
