/**
 * `--pr-command CMD`: another forge's adapter (SPEC 20.5, docs/pr-landing.md).
 * helix runs `CMD <verb>` (CMD split on spaces, no shell) with one JSON object on
 * stdin and reads one JSON object from stdout:
 *   auth        {}                                  → {"ok": true} | {"ok": false, "message": "…"}
 *   create      {"base","head","title","body"}      → {"url": "…"}
 *   view        {"ref"}                             → {"url","state","mergeable","checks",…} (or gh's shape)
 *   merge-auto  {"url","method"}                    → {}
 *   comment     {"url","body"}                      → {}
 *   checks-log  {"url"}                             → {"log": "…"}
 * A non-zero exit is a failure; its first line is the reason.
 */
import {sanitize} from '../util/sanitize.js'
import {firstForgeLine, runForge, type ForgeRun} from './spawn.js'
import {parsePrView, type Forge} from './types.js'

function answer(r: ForgeRun): Record<string, unknown> | null {
  if (r.code !== 0) return null
  try {
    const v: unknown = JSON.parse(r.stdout.trim() || '{}')
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null
  } catch {
    return null
  }
}

export function commandForge(command: string, o: {cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number}): Forge {
  const argv = command.split(' ').filter((w) => w !== '')
  const [bin = '', ...pre] = argv
  const call = (verb: string, input: Record<string, unknown>) => runForge(bin, [...pre, verb], {cwd: o.cwd, env: o.env, input: JSON.stringify(input), ...(o.timeoutMs ? {timeoutMs: o.timeoutMs} : {})})
  const fail = (verb: string, r: ForgeRun) => new Error(`--pr-command ${verb} failed: ${sanitize(r.code === 0 ? 'its answer is not a JSON object' : firstForgeLine(r)).slice(0, 200)}`)
  return {
    name: bin,
    async auth() {
      const r = await call('auth', {})
      if (r.missing) return {ok: false, message: `--pr-command '${sanitize(bin)}' is not installed or not executable`}
      const a = answer(r)
      if (a?.ok === true) return {ok: true}
      const why = typeof a?.message === 'string' ? a.message : firstForgeLine(r)
      return {ok: false, message: `'${sanitize(bin)} auth' failed: ${sanitize(why).slice(0, 200)} (log in with your forge's CLI, then run helix again)`}
    },
    async create(i) {
      const r = await call('create', {...i})
      const a = answer(r)
      if (typeof a?.url === 'string' && a.url.length > 0) return {url: a.url.slice(0, 500)}
      throw fail('create', r)
    },
    async view(ref) {
      return parsePrView(answer(await call('view', {ref})))
    },
    async mergeAuto(url, method) {
      const r = await call('merge-auto', {url, method})
      if (!answer(r)) throw fail('merge-auto', r)
    },
    async comment(url, body) {
      const r = await call('comment', {url, body})
      if (!answer(r)) throw fail('comment', r)
    },
    async checksLog(url) {
      const a = answer(await call('checks-log', {url}))
      return typeof a?.log === 'string' ? a.log.slice(-20_000) : ''
    },
  }
}
