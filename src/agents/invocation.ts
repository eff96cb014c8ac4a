/**
 * The exact command line of SPEC 3 for one agent call, and its `--dry-run`
 * text. Nothing here runs anything: `runner.ts` spawns it.
 */
import {defaultEffort} from './resolve.js'
import type {DispatchRequest} from './types.js'

export interface Invocation {
  file: string
  args: string[]
  stdin: 'ignore' | {input: string}
}

/** The exact command of SPEC 3 for `req` (effort defaults per action). */
export function buildInvocation(req: Pick<DispatchRequest, 'agent' | 'action' | 'prompt' | 'root' | 'cwd' | 'model' | 'effort'>): Invocation {
  const effort = req.effort ?? defaultEffort(req.action)
  switch (req.agent.kind) {
    case 'codex': {
      // a worker's attempt runs in its worktree (SPEC 15.1): codex's -C must name it too
      const args = ['--dangerously-bypass-approvals-and-sandbox', 'exec', '-C', req.cwd ?? req.root]
      if (req.model) args.push('-m', req.model)
      if (effort) args.push('-c', `model_reasoning_effort=${effort}`)
      args.push('--ephemeral', '--json', req.prompt)
      return {file: req.agent.path, args, stdin: 'ignore'}
    }
    case 'claude': {
      const args = ['-p', '--permission-mode', 'bypassPermissions', '--dangerously-skip-permissions', '--no-session-persistence']
      if (req.model) args.push('--model', req.model)
      if (effort) args.push('--effort', effort)
      args.push('--output-format', 'stream-json', '--verbose')
      return {file: req.agent.path, args, stdin: {input: req.prompt}}
    }
    default:
      return {file: req.agent.path, args: [], stdin: {input: req.prompt}}
  }
}

/** Quote one argument for display (POSIX shell single quotes). Display only: nothing is ever run through a shell. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg
  return `'${arg.replace(/'/g, `'\\''`)}'`
}

/**
 * The `--dry-run` text: the command line (a prompt passed as the last argv is
 * shown as `<prompt>`), where stdin comes from, the cwd, then the prompt itself.
 */
export function formatDryRun(inv: Invocation, prompt: string, root: string): string {
  const args = inv.stdin === 'ignore' && inv.args.at(-1) === prompt ? [...inv.args.slice(0, -1).map(shellQuote), '<prompt>'] : inv.args.map(shellQuote)
  return [
    `command: ${[shellQuote(inv.file), ...args].join(' ')}`,
    `cwd: ${root}`,
    `stdin: ${inv.stdin === 'ignore' ? '/dev/null' : '<prompt>'}`,
    '--- prompt ---',
    prompt.endsWith('\n') ? prompt.slice(0, -1) : prompt,
    '--- end prompt ---',
  ].join('\n') + '\n'
}
