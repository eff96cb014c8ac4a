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

type Check = (v: unknown) => boolean

const isStr: Check = (v) => typeof v === 'string'
const isNum: Check = (v) => typeof v === 'number' && Number.isFinite(v)
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const orNull = (c: Check): Check => (v) => v === null || c(v)
const arrayOf = (c: Check): Check => (v) => Array.isArray(v) && v.every(c)
const mapOf = (c: Check): Check => (v) => isObj(v) && Object.values(v).every(c)
const withId: Check = (v) => isObj(v) && typeof v.id === 'string'

/**
 * The type every known key must have. run-state is helix's own file, but it
 * outlives versions and can be edited by hand; a value of the wrong type
 * (e.g. `"skipped": "x"`) would otherwise crash status and next, so it falls
 * back to the empty state's value instead.
 */
const SHAPE: Record<string, Check> = {
  pid: orNull(isNum),
  started_at: orNull(isStr),
  updated_at: isStr,
  phase: isStr,
  agent: orNull(isStr),
  review_agent: orNull(isStr),
  current_cycle: isNum,
  attempted_cycles: isNum,
  completed_cycles: isNum,
  closed_beads: arrayOf(isStr),
  skipped: arrayOf(withId),
  attempts: mapOf(isNum),
  backoff_until: mapOf(isStr),
  current_bead: orNull(isStr),
  current_bead_started_at: orNull(isStr),
  focused_epic: orNull(isStr),
  total_tokens: isNum,
  cycles: arrayOf(isObj),
  stop_reason: orNull(isStr),
  last_run: orNull(isObj),
  parallel_run_denied_count: isNum,
  log: orNull(isStr),
  injected_supervisory: arrayOf(withId),
}

/**
 * Read run-state; a missing or unreadable file gives null (status treats it as
 * "no run yet"). Known keys holding a value of the wrong type get the empty
 * state's value; unknown keys are kept.
 */
export async function readRunState(file: string): Promise<RunState | null> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch {
    return null
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  if (!isObj(parsed)) return null
  const out: Record<string, unknown> = {...emptyRunState()}
  for (const [k, v] of Object.entries(parsed)) {
    const check = SHAPE[k]
    if (!check || check(v)) out[k] = v
  }
  return out as unknown as RunState
}

/** Atomic rewrite (temp file, fsync, rename) via write-file-atomic, loaded lazily. */
export async function writeRunState(file: string, state: RunState): Promise<void> {
  const {default: writeFileAtomic} = await import('write-file-atomic')
  await writeFileAtomic(file, JSON.stringify(state, null, 2) + '\n', {fsync: true})
}
