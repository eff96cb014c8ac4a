/**
 * SPEC 20.4 with `--sandbox` (SPEC 21.1): a conflict or a red land check goes back
 * to the agent in its own private clone, never in helix's worktree.
 *
 * The inner landing finds the problem in helix's worktree. This module puts the
 * same situation into the clone, with git run INSIDE the sandbox (the clone's
 * config and hooks are the agent's): for a conflict the worktree's stopped rebase
 * is aborted and the clone's branch is rebased onto the same base tip, so it stops
 * on the same conflict with the markers in the clone's files (the base tip's
 * objects are there through the clone's alternate, the project's object store);
 * for a red check the clone's branch is moved to the candidate that failed. After
 * the resolve call, the clone's state (a rebase or merge in progress, HEAD on the
 * branch) is read by a confined git as well; nothing outside reads the clone's
 * `.git` with git.
 */
import type {Repair} from '../loop/ports.js'
import {sanitize} from '../util/sanitize.js'

export interface ConfinedSh {
  /** runs `/bin/sh -c script sh ...args` inside the sandbox, cwd and only writable place the clone */
  (clone: string, script: string, args: string[]): Promise<{code: number; output: string}>
}

/**
 * Prints one line `state <what>` when a rebase, merge or cherry-pick is in progress,
 * else `head <symbolic ref or nothing>`. Read by a confined git.
 */
const STATE_SCRIPT = [
  'for p in rebase-merge rebase-apply MERGE_HEAD CHERRY_PICK_HEAD; do',
  '  f=$(git rev-parse --git-path "$p" 2>/dev/null) || { echo "state unreadable"; exit 0; }',
  '  if test -e "$f"; then echo "state $p"; exit 0; fi',
  'done',
  'echo "head $(git symbolic-ref -q HEAD 2>/dev/null)"',
].join('\n')

/** the clone's branch rebased onto `$1`, left stopped on a conflict; then the state line */
const REBASE_SCRIPT = `git rebase -q --no-autostash "$1" >/dev/null 2>&1\n${STATE_SCRIPT}`
/** the clone's branch (checked out) moved to `$1`, the candidate the land check failed on */
const MOVE_SCRIPT = `git reset -q --hard "$1" >/dev/null 2>&1 || { echo "reset failed"; exit 0; }\n${STATE_SCRIPT}`

/**
 * The stopped rebase or merge a crashed run (or a resolve that gave up) left in a
 * clone is aborted before its work is collected: the branch ref still names the
 * attempt's work from before the rebase, and that is what is kept.
 */
export const ABORT_STOPPED = [
  'if test -e "$(git rev-parse --git-path rebase-merge)" || test -e "$(git rev-parse --git-path rebase-apply)"; then git rebase --abort >/dev/null 2>&1; fi',
  'if test -e "$(git rev-parse --git-path MERGE_HEAD)"; then git merge --abort >/dev/null 2>&1; fi',
  'if test -e "$(git rev-parse --git-path CHERRY_PICK_HEAD)"; then git cherry-pick --abort >/dev/null 2>&1; fi',
  'true',
].join('\n')

type StateLine = {kind: 'state'; what: string} | {kind: 'head'; ref: string} | {kind: 'unknown'; line: string}

function stateOf(output: string): StateLine {
  const line = output.trim().split('\n').reverse().find((l) => /^(state|head)( |$)/.test(l)) ?? output.trim().split('\n').pop() ?? ''
  if (line.startsWith('state ')) return {kind: 'state', what: line.slice(6).trim()}
  if (line === 'head' || line.startsWith('head ')) return {kind: 'head', ref: line.slice(5).trim()}
  return {kind: 'unknown', line}
}

export function createSandboxRepair(sh: ConfinedSh) {
  /**
   * The situation of `repair` into the clone: null when it is there for the agent,
   * else why not (the attempt then ends not landed). `candidate`: for a red check,
   * the sha the check failed on (helix's worktree HEAD).
   */
  async function sendBack(clone: string, branch: string, repair: Repair, candidate: string): Promise<string | null> {
    const r = repair.kind === 'conflict' ? await sh(clone, REBASE_SCRIPT, [repair.onto]) : await sh(clone, MOVE_SCRIPT, [candidate])
    const s = stateOf(r.output)
    // a conflict stops the rebase (`state rebase-merge`); a clean rebase is fine too (the agent finds nothing to do)
    if (repair.kind === 'conflict' && s.kind === 'state' && s.what.startsWith('rebase')) return null
    if (s.kind === 'head' && s.ref === `refs/heads/${branch}`) return null
    const what = s.kind === 'state' ? `a ${s.what} in progress` : s.kind === 'head' ? `HEAD at ${s.ref || 'a detached commit'}` : s.line || `exit ${r.code}`
    return `could not give the ${repair.kind === 'conflict' ? 'conflict' : 'failed check'} to the agent's clone (${sanitize(what).slice(0, 120)})`
  }

  /** SPEC 20.4's state questions about the clone, answered by a confined git: null, or what is wrong */
  async function cloneState(clone: string, branch: string): Promise<string | null> {
    const s = stateOf((await sh(clone, STATE_SCRIPT, [])).output)
    if (s.kind === 'state') return s.what === 'unreadable' ? "the clone's repository cannot be read" : 'a rebase, merge or cherry-pick is still in progress'
    if (s.kind === 'unknown') return "the clone's repository cannot be read"
    if (s.ref !== `refs/heads/${branch}`) return `HEAD is not the attempt's branch ${branch}${s.ref ? ` (it is ${sanitize(s.ref)})` : ' (detached)'}`
    return null
  }

  return {sendBack, cloneState}
}
