/**
 * SPEC 13 through the built CLI (`npm run build` first): non-regular trackers,
 * decoy pid files, `--` ids, hostile payloads in text output and the run-state
 * denied count. The SIGSTOP torture is torture.stress.test.ts (a 3-trial smoke
 * in `npm test`, 20 trials in `npm run test:stress`).
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {symlinkSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {tempProject, stubEnv} from './helpers.js'
import {runCli} from '../support/cli.js'

// Part 1 of 3 (split for the suite's parallel workers): 13.2, non-regular trackers that a
// blocking read would hang on, so each command runs in its own process with a timeout (a
// directory, which cannot block, runs in-process: integrity-cli.test.ts).
// Part 2: integrity-pids (decoy pid files, `--` ids); part 3: integrity-text (hostile payloads, the denied count).

function timed(root: string, args: string[], env: Record<string, string>): {code: number | null; stderr: string; ms: number} {
  // (stdout and stderr together: `helix doctor` reports on stdout)
  const t0 = Date.now()
  const r = runCli(args, {cwd: root, env, timeoutMs: 10_000})
  return {code: r.code, stderr: r.stdout + r.stderr, ms: Date.now() - t0}
}

describe('13.2 a tracker that is not a regular file', () => {
  const kinds: Array<[string, (file: string) => void]> = [
    ['FIFO', (f) => execFileSync('mkfifo', [f])],
    ['symlink to /dev/zero', (f) => symlinkSync('/dev/zero', f)],
  ]
  const commands = [['status'], ['next'], ['run', '--agent', 'codex', '--max-cycles', '1'], ['tracker', 'ready'], ['tracker', 'create', 'x'], ['tracker', 'doctor'], ['doctor'], ['check', '--agent', 'codex']]

  // the CLI's own start-up time on this (shared) machine, from a normal tracker (measured once)
  let startup: number | undefined
  for (const [kind, make] of kinds) {
    it(`${kind}: every command exits 1 at once naming the file; nothing hangs`, () => {
      const env = stubEnv()
      const baseline = (startup ??= timed(tempProject('{"id":"a"}\n').root, ['tracker', 'ready'], env).ms)
      const {root, paths} = tempProject()
      spawnSync('git', ['init', '-q'], {cwd: root})
      make(paths.file)
      for (const args of commands) {
        const r = timed(root, args, env)
        expect(r.code, args.join(' ')).toBe(1)
        expect(r.stderr, args.join(' ')).toContain(`${paths.file} is not a regular file`)
        // SPEC: within 1 s. Quiet, every command takes 0.2–0.6 s here; a blocking read never
        // returns (spawnSync's timeout, code null, fails the exit-code check above). The margin
        // keeps a loaded CI machine (the stress suite beside it: `run` took 4.7 s once) from
        // failing a command that did not block.
        expect(r.ms, args.join(' ')).toBeLessThan(Math.max(8000, 3000 + 2 * baseline))
      }
    })
  }
})
