/** What the pull-request landing, its sweep and the status share (SPEC 20.5). */
import type {Bead} from '../tracker/types.js'
import type {ClaimMessage} from '../remote/claim-refs.js'
import type {LandInfo} from '../loop/ports.js'

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
