import {readFile} from 'node:fs/promises'
import type {RunState} from './types.js'

export function emptyRunState(now: Date = new Date()): RunState {
  return {
    pid: null,
    started_at: null,
    updated_at: now.toISOString(),
    phase: 'idle',
    agent: null,
    review_agent: null,
    current_cycle: 0,
    attempted_cycles: 0,
    completed_cycles: 0,
    closed_beads: [],
    skipped: [],
    attempts: {},
    backoff_until: {},
    current_bead: null,
    current_bead_started_at: null,
    focused_epic: null,
    total_tokens: 0,
    cycles: [],
    stop_reason: null,
    last_run: null,
    parallel_run_denied_count: 0,
    log: null,
    injected_supervisory: [],
  }
}

/** Read run-state; a missing or unreadable file gives null (status treats it as "no run yet"). */
export async function readRunState(file: string): Promise<RunState | null> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch {
    return null
  }
  try {
    const parsed = JSON.parse(text) as Partial<RunState>
    if (!parsed || typeof parsed !== 'object') return null
    return {...emptyRunState(), ...parsed}
  } catch {
    return null
  }
}

/** Atomic rewrite (temp file, fsync, rename) via write-file-atomic, loaded lazily. */
export async function writeRunState(file: string, state: RunState): Promise<void> {
  const {default: writeFileAtomic} = await import('write-file-atomic')
  await writeFileAtomic(file, JSON.stringify(state, null, 2) + '\n', {fsync: true})
}
