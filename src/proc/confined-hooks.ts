/**
 * Git hooks of a `--sandbox` run, run inside the sandbox (SPEC 21.1: everything
 * that runs the agent's code runs confined, the hooks of helix's commits included).
 *
 * A project may keep its hooks in its own tree (`core.hooksPath=.githooks`, husky's
 * `.husky/`), and a hook may run the project's scripts (`make lint`, lint-staged's
 * config in package.json). After the agent's work is fetched into helix's worktree,
 * and after it lands in the operator's checkout, those files are the agent's: the
 * rebase there runs `pre-rebase`, `post-checkout` and `post-rewrite`, the fast-forward
 * runs `post-merge`, every ref update `reference-transaction`. Run by helix's own git,
 * outside the sandbox, they would run the agent's program with the operator's rights.
 *
 * So a sandboxed run points git's `core.hooksPath` (through `GIT_CONFIG_COUNT`, which
 * git clears for the other side of a local push or fetch, so a remote's own hooks
 * are untouched) at a directory of small shims, one per hook name. Each shim asks
 * git, without the override, which hooks directory the repository would use, and
 * when that holds the hook, runs it in bwrap with the whole file system read-only
 * (a private /tmp writable) and the same environment an agent keeps. Hooks still run
 * (helix never skips hooks) and their exit codes count as before; a hook that must
 * write fails inside the sandbox, like an agent's write.
 */
import {createHash} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {sandboxArgv, sandboxEnv, shellQuote, type SandboxSpec} from './sandbox.js'

/** every hook git runs on the client side (githooks(5)); server-side hooks run in the remote's own repository */
export const CLIENT_HOOKS = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'reference-transaction',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'post-index-change',
  'p4-changelist',
  'p4-prepare-changelist',
  'p4-post-changelist',
  'p4-pre-submit',
]

/** the variables git sets for a hook that the hook needs inside the sandbox (which repository, index, identity) */
const PASSED = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_PREFIX', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH', 'GIT_EXEC_PATH', 'GIT_REFLOG_ACTION', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_COMMITTER_DATE']

const CWD = '\u0000cwd'

/** the text of one shim: `count` is the operator's own GIT_CONFIG_COUNT (our entry is the last) */
function shimText(name: string, count: number, options: string[], kept: NodeJS.ProcessEnv): string {
  const words = options.map((w) => (w === CWD ? '"$PWD"' : shellQuote(w)))
  const chdir = words.indexOf('--chdir')
  // the hook's directory and the work tree, read-only, wherever they are (a /tmp or home path is hidden otherwise)
  words.splice(chdir, 0, '--ro-bind-try', '"$d"', '"$d"', '--ro-bind-try', '"$PWD"', '"$PWD"')
  const envWords = Object.entries(kept).map(([k, v]) => shellQuote(`${k}=${v ?? ''}`))
  return [
    '#!/bin/sh',
    `# helix --sandbox: the repository's own ${name} hook, run inside bubblewrap (src/proc/confined-hooks.ts)`,
    `d=$(GIT_CONFIG_COUNT=${count} git rev-parse --path-format=absolute --git-path hooks 2>/dev/null) || exit 0`,
    `h="$d/${name}"`,
    'test -f "$h" && test -x "$h" || exit 0',
    'set -- "$h" "$@"',
    `for v in ${PASSED.join(' ')}; do`,
    '  eval "test -n \\"\\${$v+x}\\"" && eval "set -- --setenv $v \\"\\$$v\\" \\"\\$@\\""',
    'done',
    `exec env -i ${envWords.join(' ')} ${words.join(' ')} "$@"`,
    '',
  ].join('\n')
}

/**
 * Writes the shims for `spec` under `<root>/.helix/confined-hooks/<digest>/` (a
 * directory no sandbox can write) and returns `env` with `core.hooksPath` pointing
 * there. `readable`: what a confined hook needs under /tmp or home (the project
 * root, helix, node).
 */
export function confineGitHooks(root: string, spec: SandboxSpec, env: NodeJS.ProcessEnv, readable: string[]): NodeJS.ProcessEnv {
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10)
  const n = Number.isInteger(count) && count >= 0 ? count : 0
  const kept = sandboxEnv(spec, env)
  const options = sandboxArgv(spec, [], {cwd: CWD, rw: [], ro: readable, env})
  const shims = CLIENT_HOOKS.map((name) => [name, shimText(name, n, options, kept)] as const)
  const digest = createHash('sha256').update(JSON.stringify(shims)).digest('hex').slice(0, 16)
  const dir = path.join(root, '.helix', 'confined-hooks', digest)
  if (!existsSync(path.join(dir, CLIENT_HOOKS.at(-1)!))) {
    // made beside and renamed into place whole: a second run never sees half a directory
    const tmp = `${dir}.${process.pid}.tmp`
    rmSync(tmp, {recursive: true, force: true})
    mkdirSync(tmp, {recursive: true})
    for (const [name, text] of shims) {
      writeFileSync(path.join(tmp, name), text, {mode: 0o755})
      chmodSync(path.join(tmp, name), 0o755)
    }
    try {
      renameSync(tmp, dir)
    } catch {
      // another run made the same directory meanwhile: it is the same text
      rmSync(tmp, {recursive: true, force: true})
    }
  }
  return {...env, GIT_CONFIG_COUNT: String(n + 1), [`GIT_CONFIG_KEY_${n}`]: 'core.hooksPath', [`GIT_CONFIG_VALUE_${n}`]: dir}
}
