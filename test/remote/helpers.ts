// Bare remotes and host clones for the SPEC 19 tests: the rig's (test/support/git.ts).
import {runCli} from '../support/cli.js'
import {bareRemote, GIT_ISOLATION, type Remote} from '../support/git.js'
import {g, gitTestEnv} from '../landing/helpers.js'

export {g, gitTestEnv}

export type Fleet = Remote

/** a bare repository `remote.git` on branch main holding `beads` as .ddx/beads.jsonl, plus a way to clone hosts */
export function makeFleet(beads: Array<Record<string, unknown>> = [], files: Record<string, string> = {}): Fleet {
  return bareRemote(beads, files)
}

export function remoteRefs(bare: string, prefix = 'refs/helix/'): string[] {
  return g(bare, 'for-each-ref', '--format=%(refname)', prefix).split('\n').filter(Boolean)
}

export function bead(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {id, title: `task ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', ...extra}
}

/** `helix <args>` in a host clone through the rig's runner (cli.ts), with the tests' git isolation; `status` is the exit code */
export function hostCli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): {status: number | null; stdout: string; stderr: string} {
  const r = runCli(args, {cwd, env: {...GIT_ISOLATION, ...env}})
  return {status: r.code, stdout: r.stdout, stderr: r.stderr}
}
