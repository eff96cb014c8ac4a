/**
 * `git push --porcelain` as data (SPEC 19.1): which ref was accepted, which was
 * rejected and why, and whether the remote was reached at all. git prints one
 * line per ref, `<flag>\t<from>:<to>\t<summary>`, between `To <url>` and `Done`;
 * flags: ' ' fast-forward, '+' forced, '-' deleted, '*' new, '=' up to date,
 * '!' rejected.
 */
import {git, type GitResult} from '../git/run.js'

export interface PushedRef {
  flag: string
  from: string
  to: string
  summary: string
}

export interface PushResult {
  /** every ref accepted (exit 0) */
  ok: boolean
  /** the remote never answered (no ref line at all and a non-zero exit) */
  unreachable: boolean
  refs: PushedRef[]
  /** first line of git's complaint, for a one-line reason */
  message: string
}

export function parsePorcelain(r: GitResult): PushResult {
  const refs: PushedRef[] = []
  for (const line of r.stdout.split('\n')) {
    const m = /^([ +\-*=!])\t([^\t]*)\t(.*)$/.exec(line)
    if (!m) continue
    const [from, ...rest] = (m[2] as string).split(':')
    refs.push({flag: m[1] as string, from: from ?? '', to: rest.join(':'), summary: m[3] as string})
  }
  const message = `${r.stderr}\n${r.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('To ') && l !== 'Done') ?? `git push exited ${r.code}`
  return {ok: r.code === 0 && !refs.some((x) => x.flag === '!'), unreachable: r.code !== 0 && refs.length === 0, refs, message}
}

/** the line of one destination ref, when git printed one */
export const refLine = (p: PushResult, to: string): PushedRef | undefined => p.refs.find((x) => x.to === to)

export const accepted = (p: PushResult, to: string): boolean => {
  const l = refLine(p, to)
  return l !== undefined && l.flag !== '!'
}

/**
 * `git push --porcelain <args>`; never throws. `hooks: false` (claim refs only:
 * helix's own bookkeeping, pushed every lease/3) skips a pre-push hook; a push
 * that moves the base runs the repository's hooks (the owner's policy).
 */
export async function push(args: string[], opts: {cwd: string; env: NodeJS.ProcessEnv; hooks?: boolean}): Promise<PushResult> {
  return parsePorcelain(await git(['push', '--porcelain', ...(opts.hooks === false ? ['--no-verify'] : []), ...args], opts))
}
