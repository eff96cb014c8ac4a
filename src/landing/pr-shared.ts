/** What the pull-request landing, its sweep and the status share (SPEC 20.5). */
import type {Bead} from '../tracker/types.js'
import type {ClaimMessage} from '../remote/claim-refs.js'
import type {LandInfo} from '../loop/ports.js'
import {forgeAway, type Forge, type MergeMethod} from '../forge/types.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

export const prBranch = (bead: string): string => `helix/${bead}`

/** a claim that never expires: the forge holds the lock while the pull request is open */
export const NO_EXPIRY = '9999-12-31T23:59:59.000Z'

export function prClaimMessage(a: {host: string; run: string; pid: number; attempt: number; url: string; now: Date}): ClaimMessage {
  return {host: a.host, run: a.run, pid: a.pid, attempt: a.attempt, claimed_at: a.now.toISOString(), expires_at: NO_EXPIRY, pr_url: a.url}
}

const tail = (text: string, lines: number): string => text.trim().split('\n').slice(-lines).join('\n')
/** no control characters (terminal escapes included) in what goes on the forge's page */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const controls = (text: string): string => text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '')
/** text a person or an agent wrote, as markdown that cannot carry raw HTML or ping anyone */
export const neutral = (text: string): string => controls(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/@(?=\w)/g, '@\u200b')
/** the agent's own words verbatim, in a code block no backtick run inside can end */
const fence = (text: string): string => {
  const longest = Math.max(2, ...[...controls(text).matchAll(/`+/g)].map((m) => m[0].length))
  const ticks = '`'.repeat(longest + 1)
  return `${ticks}text\n${controls(text)}\n${ticks}`
}

/** `<id>: <title>`, one line without control characters (an argv entry, never a shell word) */
export const prTitle = (bead: Bead): string => controls(`${bead.id}: ${String(bead.title ?? '')}`).replace(/\s+/g, ' ').trim().slice(0, 240)

/** the pull request's body: the bead's description, the attempt's summary, the review's verdict, the land check's result */
export function prBody(bead: Bead, info: LandInfo | undefined, check?: string): string {
  const parts = [`Bead \`${neutral(bead.id)}\`, worked by helix.`, '']
  const desc = typeof bead.description === 'string' ? bead.description.trim() : ''
  parts.push('## What the bead asks', '', desc ? neutral(desc) : '(no description)', '')
  if (typeof bead.acceptance === 'string' && bead.acceptance.trim()) parts.push('## Acceptance', '', neutral(bead.acceptance.trim()), '')
  const summary = info?.summary ? tail(info.summary, 30) : ''
  parts.push("## The agent's summary", '', summary ? fence(summary) : '(the agent said nothing)', '')
  parts.push('## Review', '', info?.review ?? 'no review ran for this attempt', '')
  if (check) parts.push('## Land check', '', check, '')
  parts.push('---', `The branch closes \`${bead.id}\` in \`.ddx/beads.jsonl\`: the bead is closed on the base when this merges. helix force-pushes this branch when it rebases it; close the pull request to send the bead back to the queue.`)
  return parts.join('\n')
}

/** `--pr-auto-merge`: asked for once a pull request opens, and again at the next looks while the forge cannot be reached */
export interface AutoMerge {
  /** ask the forge to merge `url` once its checks pass; never throws */
  request(url: string): Promise<void>
  /** ask again for those whose request met a forge that could not be reached (each look of the sweep) */
  retry(): Promise<void>
  /** the pull requests still to be asked for */
  due(): string[]
}

export function createAutoMerge(o: {forge: Pick<Forge, 'name' | 'mergeAuto'>; method: MergeMethod; log: (line: string) => void}): AutoMerge {
  const due = new Set<string>()
  async function ask(url: string, again: boolean): Promise<void> {
    try {
      await o.forge.mergeAuto(url, o.method)
      due.delete(url)
      if (again) o.log(`helix: asked ${sanitize(o.forge.name)} to merge ${sanitize(url)} once its checks pass (--pr-auto-merge ${o.method})`)
    } catch (error) {
      const why = sanitize(errorMessage(error))
      if (forgeAway(why)) {
        // said once; asked again at every look until the forge answers
        if (!due.has(url)) o.log(`helix: ${sanitize(o.forge.name)} could not be reached to auto-merge ${sanitize(url)} (${why}); asked again at the next look`)
        due.add(url)
        return
      }
      due.delete(url)
      o.log(`helix: ${why} (${sanitize(url)}); it waits for a person to merge`)
    }
  }
  return {
    request: (url) => ask(url, false),
    async retry() {
      for (const url of [...due]) await ask(url, true)
    },
    due: () => [...due],
  }
}
