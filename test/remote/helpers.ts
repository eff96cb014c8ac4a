// Bare remotes and host clones in temp dirs for the SPEC 19 tests.
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {g, gitTestEnv} from '../landing/helpers.js'
import {makeTempDir} from '../support/tmp.js'

export {g, gitTestEnv}

export interface Fleet {
  dir: string
  bare: string
  clone(name: string): string
}

/** a bare repository `remote.git` on branch main holding `beads` as .ddx/beads.jsonl, plus a way to clone hosts */
export function makeFleet(beads: Array<Record<string, unknown>> = [], files: Record<string, string> = {}): Fleet {
  const dir = makeTempDir('helix-remote-')
  const bare = path.join(dir, 'remote.git')
  g(dir, 'init', '-q', '--bare', '-b', 'main', bare)
  const seed = path.join(dir, 'seed')
  g(dir, 'init', '-q', '-b', 'main', seed)
  mkdirSync(path.join(seed, '.ddx'))
  writeFileSync(path.join(seed, '.ddx', 'beads.jsonl'), beads.map((b) => JSON.stringify(b)).join('\n') + (beads.length ? '\n' : ''))
  writeFileSync(path.join(seed, 'README.md'), 'fleet\n')
  for (const [f, t] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(seed, f)), {recursive: true})
    writeFileSync(path.join(seed, f), t)
  }
  g(seed, 'add', '-A')
  g(seed, '-c', 'user.name=Seed', '-c', 'user.email=seed@example.com', 'commit', '-q', '-m', 'seed')
  g(seed, 'push', '-q', bare, 'main')
  return {
    dir,
    bare,
    clone(name: string): string {
      const c = path.join(dir, name)
      g(dir, 'clone', '-q', bare, c)
      g(c, 'config', 'user.email', `${name}@example.com`)
      g(c, 'config', 'user.name', name)
      return c
    },
  }
}

export function remoteRefs(bare: string, prefix = 'refs/helix/'): string[] {
  return g(bare, 'for-each-ref', '--format=%(refname)', prefix).split('\n').filter(Boolean)
}

export function bead(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {id, title: `task ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', ...extra}
}
