/**
 * The known bead fields (SPEC 2.1) and their types; unknown keys pass through.
 * Checked by hand rather than with a schema library: zod was ~0.6 MB of code that
 * every write command (create, update, close, each claim of a run) had to load and
 * compile for 27 flat fields, about a tenth of such a command's start-up. The
 * messages keep the wording zod gave them (`priority: Too big: expected number to be
 * <=4`), which doctor and write errors print.
 */
import type {Bead} from './types.js'

type Check = (v: unknown, at: string, out: string[]) => void

function received(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : 'Infinity'
  return typeof v
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const isInt = (v: unknown): v is number => Number.isSafeInteger(v)

function expected(type: string): Check {
  return (v, at, out) => void out.push(`${at}: Invalid input: expected ${type}, received ${received(v)}`)
}

const str = (min = 0): Check => (v, at, out) => {
  if (typeof v !== 'string') expected('string')(v, at, out)
  else if (v.length < min) out.push(`${at}: Too small: expected string to have >=${min} characters`)
}

const int = (min?: number, max?: number): Check => (v, at, out) => {
  if (!isNumber(v)) return expected('number')(v, at, out)
  if (!Number.isInteger(v)) return expected('int')(v, at, out)
  if (v > Number.MAX_SAFE_INTEGER) return void out.push(`${at}: Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`)
  if (v < -Number.MAX_SAFE_INTEGER) return void out.push(`${at}: Too small: expected int to be >=-${Number.MAX_SAFE_INTEGER}`)
  if (min !== undefined && v < min) out.push(`${at}: Too small: expected number to be >=${min}`)
  else if (max !== undefined && v > max) out.push(`${at}: Too big: expected number to be <=${max}`)
}

const bool: Check = (v, at, out) => {
  if (typeof v !== 'boolean') expected('boolean')(v, at, out)
}

/** One of several shapes: no detail, as a union has no single expected type. */
const oneOf = (...ok: Array<(v: unknown) => boolean>): Check => (v, at, out) => {
  if (!ok.some((f) => f(v))) out.push(`${at}: Invalid input`)
}

const arrayOf = (item: Check): Check => (v, at, out) => {
  if (!Array.isArray(v)) return expected('array')(v, at, out)
  v.forEach((x, i) => item(x, `${at}.${i}`, out))
}

/** An object with these known fields (optional unless listed in `required`); other keys are free. */
function record(fields: Record<string, Check>, required: readonly string[] = []): Check {
  return (v, at, out) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return expected('object')(v, at, out)
    const o = v as Record<string, unknown>
    for (const [key, check] of Object.entries(fields)) {
      const value = o[key]
      if (value === undefined && !required.includes(key)) continue
      check(value, at ? `${at}.${key}` : key, out)
    }
  }
}

const dependency = record({issue_id: str(), depends_on_id: str(1), type: str(), created_at: str()}, ['issue_id', 'depends_on_id', 'type'])

const bead = record(
  {
    id: str(1),
    title: str(),
    status: str(),
    priority: int(0, 4),
    issue_type: str(),
    schema_version: int(),
    owner: str(),
    created_at: str(),
    updated_at: str(),
    labels: arrayOf(str()),
    parent: str(),
    description: str(),
    acceptance: str(),
    notes: str(),
    dependencies: arrayOf(dependency),
    'execution-eligible': bool,
    'queue-rank': int(),
    'claimed-pid': oneOf(isInt, (v) => typeof v === 'string'),
    'claimed-at': str(),
    'claimed-machine': str(),
    'claimed-start': oneOf((v) => typeof v === 'string', isNumber),
    'claim-token': str(),
    'spec-id': str(),
    'superseded-by': str(),
    replaces: str(),
    design: str(),
  },
  ['id'],
)

/** Human-readable problems with a bead's known fields ([] when fine). */
export function beadProblems(b: Bead): string[] {
  const out: string[] = []
  bead(b, '', out)
  return out.map((p) => (p.startsWith(': ') ? `(record)${p}` : p))
}
