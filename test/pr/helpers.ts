// A PROTECTED bare remote and the gh stand-in (fixtures/forge/gh) for the --land pr tests (SPEC 20.6).
// The remote's pre-receive hook refuses every push to main unless FORGE_MERGING=1, which only the
// stand-in's merge step sets; it logs every ref pushed, so a test can show what helix pushed.
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {bead, g, gitTestEnv, makeFleet, type Fleet} from '../remote/helpers.js'

export {bead, g, gitTestEnv}
export const FORGE_BIN = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'forge')

export interface Forge extends Fleet {
  state: string
  hookLog: string
  env: NodeJS.ProcessEnv
  /** runs the stand-in as the forge (the test's side): merge, close, auto, checks, list */
  gh(...args: string[]): {code: number | null; out: string}
  prs(): Array<{number: number; url: string; head: string; title: string; body: string; state: string; auto: string | null}>
  /** every ref pushed to the remote, with whether the forge's merge pushed it */
  pushes(): Array<{ref: string; forge: boolean}>
  /**
   * a wait condition: `branch` on the remote moved off `before`. git is asked only once the
   * hook logged a push of that branch after the condition was made (a read of the hook's log
   * until then, not a git start each poll); a push the remote then refused leaves the branch
   * where it was, so the condition stays false.
   */
  pushedAgain(branch: string, before: string): () => boolean
}

export function protectedForge(beads: Array<Record<string, unknown>>, files: Record<string, string> = {}): Forge {
  const f = makeFleet(beads, files)
  const hookLog = path.join(f.dir, 'pushes.log')
  const hook = path.join(f.bare, 'hooks', 'pre-receive')
  writeFileSync(
    hook,
    `#!/bin/sh
while read old new ref; do
  echo "$ref \${FORGE_MERGING:-0}" >> '${hookLog}'
  if [ "$ref" = refs/heads/main ] && [ "\${FORGE_MERGING:-0}" != 1 ]; then echo "main is protected: merge through a pull request" >&2; exit 1; fi
done
`,
  )
  chmodSync(hook, 0o755)
  const state = path.join(f.dir, 'forge.json')
  const env: NodeJS.ProcessEnv = {PATH: `${FORGE_BIN}${path.delimiter}${process.env.PATH ?? ''}`, FORGE_STATE: state, FORGE_REMOTE: f.bare, HELIX_BACKOFF_SLEEP: '0'}
  const gh = (...args: string[]) => {
    const r = spawnSync(path.join(FORGE_BIN, 'gh'), args, {env: {...gitTestEnv, ...env}, encoding: 'utf8'})
    return {code: r.status, out: `${r.stdout}${r.stderr}`}
  }
  const pushes = () =>
    existsSync(hookLog)
      ? readFileSync(hookLog, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => ({ref: l.split(' ')[0] as string, forge: l.endsWith(' 1')}))
      : []
  const pushesOf = (ref: string) => pushes().filter((p) => p.ref === ref).length
  return {
    ...f,
    state,
    hookLog,
    env,
    gh,
    prs: () => (existsSync(state) ? (JSON.parse(readFileSync(state, 'utf8')) as {prs: ReturnType<Forge['prs']>}).prs : []),
    pushes,
    pushedAgain: (branch, before) => {
      const ref = `refs/heads/${branch}`
      const seen = pushesOf(ref)
      return () => pushesOf(ref) > seen && g(f.bare, 'rev-parse', branch) !== before
    },
  }
}

/** the overlay on refs/helix/state (SPEC 20.5), by bead id */
export function stateOverlay(bare: string): Map<string, Record<string, unknown>> {
  const r = spawnSync('git', ['cat-file', 'blob', 'refs/helix/state:overlay.jsonl'], {cwd: bare, encoding: 'utf8'})
  const out = new Map<string, Record<string, unknown>>()
  if (r.status !== 0) return out
  for (const l of r.stdout.split('\n').filter(Boolean)) {
    const o = JSON.parse(l) as Record<string, unknown>
    out.set(String(o.id), o)
  }
  return out
}
