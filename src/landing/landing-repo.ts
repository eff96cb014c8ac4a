/**
 * The repository facts a local landing needs about the project root, asked once
 * per run: the top level, the root's prefix in it, the common git directory, the
 * environment helix's git runs with (with helix's identity when the repository
 * has none), and the typed git layer on the root. Split out of local.ts.
 */
import path from 'node:path'
import {gitEnv} from '../git/run.js'
import {openRepo, type Repo} from '../git/repo.js'
import {factsIn, type CheckoutFacts} from '../git/where.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

export interface LandingRepo {
  /** repository top level of the root */
  top: string
  /** the root relative to `top`, `''` or ending in `/` */
  prefix: string
  commonDir: string
  env: NodeJS.ProcessEnv
  /** the tracker directory relative to `top` when it lies inside the repository */
  trackerRel: string | null
  /** the typed git layer on the root, with `env` */
  git: Repo
}

export const NEEDS_BRANCH = 'helix run: --workers needs a git checkout on a branch'

/**
 * Two git processes: one rev-parse for the three places, one config for the identity.
 * With `known` (the run's start-up check, asked in this same root) the rev-parse is spared.
 */
export async function openLandingRepo(root: string, trackerDir: string, env0: NodeJS.ProcessEnv, known?: CheckoutFacts | null): Promise<LandingRepo> {
  const g0 = openRepo(root, gitEnv(env0))
  let top: string, prefix: string, common: string
  const facts = factsIn(known, root)
  if (facts) ({top, prefix, commonDir: common} = facts)
  else {
    const where = await g0.run(['rev-parse', '--show-toplevel', '--show-prefix', '--git-common-dir'])
    if (where.code !== 0) throw new HelixError(`${NEEDS_BRANCH} (${sanitize(root)} is not in a git repository); run 'git init' and commit once, or use --workers 1`, EXIT.ERROR)
    ;[top = '', prefix = '', common = ''] = where.stdout.split('\n').map((l) => l.trim())
  }
  // `git config user.email` and `user.name` both set (an empty value counts, as it did for `git config <key>`)
  const keys = new Set((await g0.run(['config', '--get-regexp', '^user\\.(email|name)$'])).stdout.split('\n').map((l) => l.split(' ')[0]))
  const env = gitEnv(env0, keys.has('user.email') && keys.has('user.name') ? null : {name: 'helix', email: 'helix@localhost'})
  const t = path.relative(top, path.resolve(trackerDir))
  return {
    top,
    prefix,
    commonDir: path.resolve(root, common),
    env,
    trackerRel: t && !t.startsWith('..') && !path.isAbsolute(t) ? t.split(path.sep).join('/') : null,
    git: openRepo(root, env),
  }
}
