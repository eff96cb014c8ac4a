// A `git` first on PATH that kill -9s helix at a chosen git command, and runs the real git
// otherwise: how the crash tests stop helix at an exact point of a landing (before a push,
// after a branch's deletion, after a claim's renewal).
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {makeTempDir} from './tmp.js'

export interface KillAt {
  /** an sh `case` pattern matched against " <git's arguments> ", e.g. `*" push "*"--atomic"*` */
  match: string
  /** kill once the real git has run (its exit code is kept), not instead of it (then git fails) */
  after?: boolean
  /** how many matching commands kill (default 1); later ones run the real git */
  times?: number
  /** kill only while this file exists; it is removed when it fires */
  armed?: string
}

export interface KillingGit {
  /** `PATH` with the shim first */
  path: () => string
  /** how many times rule `i` has fired */
  fired: (i?: number) => number
}

/** a `git` that kill -9s its parent (helix) where a rule matches; the rules are tried in order */
export function killingGit(...rules: KillAt[]): KillingGit {
  const dir = makeTempDir('helix-git-shim-')
  const real = spawnSync('sh', ['-c', 'command -v git'], {encoding: 'utf8'}).stdout.trim()
  const bin = path.join(dir, 'bin')
  mkdirSync(bin)
  const count = (i: number) => path.join(dir, `fired-${i}`)
  const cases = rules.map((r, i) => {
    writeFileSync(count(i), '')
    const when = [`[ $(wc -c < '${count(i)}') -lt ${r.times ?? 1} ]`, ...(r.armed ? [`[ -e '${r.armed}' ]`] : [])].join(' && ')
    const then = [`printf x >> '${count(i)}'`, ...(r.armed ? [`rm -f '${r.armed}'`] : []), r.after ? `'${real}' "$@"; rc=$?; kill -9 "$PPID"; exit $rc` : `kill -9 "$PPID"; sleep 5; exit 1`].join('; ')
    return `  ${r.match})\n    if ${when}; then ${then}; fi ;;`
  })
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh\ncase " $* " in\n${cases.join('\n')}\nesac\nexec '${real}' "$@"\n`)
  chmodSync(path.join(bin, 'git'), 0o755)
  return {
    path: () => `${bin}:${process.env.PATH ?? ''}`,
    fired: (i = 0) => readFileSync(count(i), 'utf8').length,
  }
}
