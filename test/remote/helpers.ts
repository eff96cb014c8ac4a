// Bare remotes and host clones for the SPEC 19 tests: the rig's (test/support/git.ts).
import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
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

/**
 * A pre-receive hook on `bare` that refuses every landing (an update of main together
 * with the deletion of a claim ref) with `say` on stderr, in git's words for a lost race
 * or a lock, appending a line to `log` each time when given. Tracker-only commits,
 * claims and preserved refs go through.
 */
export function refuseEveryLanding(bare: string, say: string, log?: string): void {
  const hook = path.join(bare, 'hooks', 'pre-receive')
  writeFileSync(
    hook,
    `#!/bin/sh
main=0; release=0
while read old new ref; do
  case "$ref" in
    refs/heads/main) main=1 ;;
    refs/helix/claims/*) [ "$new" = 0000000000000000000000000000000000000000 ] && release=1 ;;
  esac
done
if [ $main = 1 ] && [ $release = 1 ]; then
  ${log ? `echo lost >> '${log}'` : ':'}
  echo "${say}" >&2
  exit 1
fi
exit 0
`,
  )
  chmodSync(hook, 0o755)
}

/** another host moves the base by hand: a clone of its own changes `shared.txt` and pushes it */
export function otherHostLands(f: Fleet): void {
  const other = f.clone('other')
  g(other, 'pull', '-q', 'origin', 'main')
  writeFileSync(path.join(other, 'shared.txt'), 'other\n')
  g(other, 'commit', '-q', '-am', 'other host')
  g(other, 'push', '-q', 'origin', 'main')
}

/** the calls test/pr/pr-agent.pl logged (PR_AGENT_LOG), one JSON object a line */
export function agentCalls<T = {action: string; bead: string}>(log: string): T[] {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as T)
    : []
}
