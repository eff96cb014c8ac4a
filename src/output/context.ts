/** `.helix/context.md` (SPEC 6.4): execution context prepended to implementation prompts. */
import {mkdir, readFile} from 'node:fs/promises'
import path from 'node:path'
import {atomicWrite} from '../util/atomic-write.js'
import {isNotFound} from '../util/files.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {readyBeads, statusOf} from '../tracker/queries.js'

/** The `Quick Reference` section of AGENTS.md (heading to the next heading of the same or higher level). */
export function quickReference(agentsMd: string): string | null {
  const lines = agentsMd.split(/\r?\n/)
  const start = lines.findIndex((l) => /^#{1,6}\s+.*quick reference/i.test(l))
  if (start < 0) return null
  const level = (/^(#+)/.exec(lines[start]) as RegExpExecArray)[1].length
  const body: string[] = []
  for (let i = start + 1; i < lines.length; i++) {
    const m = /^(#+)\s/.exec(lines[i])
    if (m && m[1].length <= level) break
    body.push(lines[i])
  }
  const text = body.join('\n').trim()
  return text === '' ? null : text
}

export interface ContextInput {
  root: string
  trackerFile: string
  snap: TrackerSnapshot
  staleClaims?: Set<string>
  focusedEpic: Bead | null
  agentsMd: string | null
}

export function renderContext(i: ContextInput): string {
  const count = (s: string) => i.snap.beads.filter((b) => statusOf(b) === s).length
  const ready = readyBeads(i.snap, {staleClaims: i.staleClaims}).length
  const out: string[] = [
    '# HELIX Execution Context',
    '',
    `Project root: ${i.root}`,
    `Tracker: ${i.trackerFile}`,
    `Issue counts: ready=${ready}, open=${count('open')}, in-progress=${count('in_progress')}, closed=${count('closed')}`,
    '',
  ]
  const qr = i.agentsMd ? quickReference(i.agentsMd) : null
  if (qr) out.push('## Quick Reference (from AGENTS.md)', '', qr, '')
  if (i.focusedEpic) {
    const e = i.focusedEpic
    out.push('## Focused epic', '', `- id: ${e.id}`, `- title: ${e.title ?? ''}`)
    const spec = typeof e['spec-id'] === 'string' ? e['spec-id'] : ''
    if (spec) out.push(`- spec: ${spec}`)
    if (e.acceptance) out.push(`- acceptance: ${e.acceptance}`)
    out.push('')
  }
  out.push(
    '## Rules',
    '',
    '- Work only on the implementation target (and batch members, if any).',
    '- Re-read the bead with `helix tracker show <id>` right before closing it; someone may have changed it.',
    '- Close the bead with `helix tracker close <id>` only when its acceptance is met.',
    '- File follow-up work as new beads; never edit governance fields (spec-id, parent, dependencies) of the target.',
    '- Never run git push, git reset, git revert or git checkout of other people\'s work.',
    '',
  )
  return out.join('\n')
}

/**
 * Replaced whole (an agent never reads half a file), but not fsynced: context.md is
 * regenerated at every run start (SPEC 6.4) and holds nothing a crash could lose, and the
 * two fsyncs cost a run start tens of milliseconds on a busy disk.
 */
export async function writeContextFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), {recursive: true})
  await atomicWrite(file, text, {durable: false})
}

export async function readAgentsMd(root: string): Promise<string | null> {
  try {
    return await readFile(path.join(root, 'AGENTS.md'), 'utf8')
  } catch (error) {
    // no AGENTS.md: the context has no such section. An unreadable one is an error, not a silent omission.
    if (isNotFound(error)) return null
    throw error
  }
}
