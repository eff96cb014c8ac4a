/**
 * The default forge: GitHub through its own CLI, `gh` (SPEC 20.5). Uses only
 * what gh documents: `auth status`, `pr create --base --head --title --body-file`,
 * `pr view <ref> --json …`, `pr merge <url> --auto --<method>`, `pr comment
 * --body-file`, `pr checks`. Bodies go through a file, never an argument a shell sees.
 */
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {sanitize} from '../util/sanitize.js'
import {firstForgeLine, runForge} from './spawn.js'
import {findUrl, parsePrView, type Forge} from './types.js'

export const GH_VIEW_FIELDS = 'state,mergedAt,mergeCommit,url,mergeable,statusCheckRollup,createdAt,comments'

/** `timeoutMs`: how long one gh command may take (default: spawn.ts's FORGE_TIMEOUT_MS) */
export function ghForge(o: {cwd: string; env: NodeJS.ProcessEnv; bin?: string; timeoutMs?: number}): Forge {
  const bin = o.bin ?? 'gh'
  const gh = (args: string[]) => runForge(bin, args, {cwd: o.cwd, env: o.env, ...(o.timeoutMs ? {timeoutMs: o.timeoutMs} : {})})
  async function withBody<T>(body: string, fn: (file: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'helix-pr-'))
    try {
      const file = path.join(dir, 'body.md')
      await writeFile(file, body)
      return await fn(file)
    } finally {
      await rm(dir, {recursive: true, force: true})
    }
  }
  return {
    name: 'gh',
    async auth() {
      const r = await gh(['auth', 'status'])
      if (r.missing) return {ok: false, message: `GitHub's CLI '${bin}' is not installed (install gh, then log in with 'gh auth login')`}
      if (r.code !== 0) return {ok: false, message: `'gh auth status' failed (${sanitize(firstForgeLine(r)).slice(0, 160)}): log in with 'gh auth login'`}
      return {ok: true}
    },
    async create(i) {
      return withBody(i.body, async (file) => {
        const r = await gh(['pr', 'create', '--base', i.base, '--head', i.head, '--title', i.title, '--body-file', file])
        const url = findUrl(r.stdout)
        if (r.code === 0 && url) return {url}
        // gh refuses a second pull request for one head and names the open one
        const open = /already exists/.test(r.stderr) ? findUrl(r.stderr) : null
        if (open) return {url: open}
        // gh said it succeeded and named no pull request (a proxy's page, a cut answer): the forge may have
        // opened it, so this is asked again (a second create finds the open one), not held against the bead
        if (r.code === 0) throw new Error(`gh pr create did not answer with a pull request's URL: ${sanitize(firstForgeLine(r)).slice(0, 200)}`)
        throw new Error(`gh pr create failed: ${sanitize(firstForgeLine(r)).slice(0, 200)}`)
      })
    },
    async view(ref) {
      const r = await gh(['pr', 'view', ref, '--json', GH_VIEW_FIELDS])
      if (r.code !== 0) return null
      try {
        return parsePrView(JSON.parse(r.stdout))
      } catch {
        return null
      }
    },
    async mergeAuto(url, method) {
      const r = await gh(['pr', 'merge', url, '--auto', `--${method}`])
      if (r.code !== 0) throw new Error(`gh pr merge --auto failed: ${sanitize(firstForgeLine(r)).slice(0, 200)}`)
    },
    async comment(url, body) {
      await withBody(body, async (file) => {
        const r = await gh(['pr', 'comment', url, '--body-file', file])
        if (r.code !== 0) throw new Error(`gh pr comment failed: ${sanitize(firstForgeLine(r)).slice(0, 200)}`)
      })
    },
    async checksLog(url) {
      const r = await gh(['pr', 'checks', url])
      return r.stdout.slice(-20_000)
    },
  }
}
