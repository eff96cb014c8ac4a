/**
 * The known bead fields (SPEC 2.1) and their types; unknown keys pass through.
 * Checked by hand rather than with a schema library: a schema library is a lot of
 * code that every write command (create, update, close, each claim of a run) would
 * load and compile for a few dozen flat fields (docs/decisions.md). The
 * messages are our own words (`priority: must be at most 4, not 7`), which doctor
 * and write errors print: the field's path, what it must be, and what it is (a type,
 * or a number; never the text of a value, which may be anything).
 */
import type {Bead} from './types.js'

type Check = (v: unknown, at: string, out: string[]) => void

/** what a value is, in words: `a string`, `null`, `an array`, `the number 1.5` */
function what(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'number') return Number.isFinite(v) ? `the number ${v}` : 'a number out of range'
  if (typeof v === 'object') return 'an object'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  return `a ${typeof v}`
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const isInt = (v: unknown): v is number => Number.isSafeInteger(v)

function mustBe(desc: string): Check {
  return (v, at, out) => void out.push(v === undefined ? `${at}: missing; must be ${desc}` : `${at}: must be ${desc}, not ${what(v)}`)
}

const str = (min = 0): Check => (v, at, out) => {
  if (typeof v !== 'string') mustBe('a string')(v, at, out)
  else if (v.length < min) out.push(`${at}: must not be empty`)
}

const int = (min?: number, max?: number): Check => (v, at, out) => {
  if (!isNumber(v) || !Number.isInteger(v) || Math.abs(v) > Number.MAX_SAFE_INTEGER) return mustBe('a whole number')(v, at, out)
  if (min !== undefined && v < min) out.push(`${at}: must be at least ${min}, not ${v}`)
  else if (max !== undefined && v > max) out.push(`${at}: must be at most ${max}, not ${v}`)
}

const bool: Check = (v, at, out) => {
  if (typeof v !== 'boolean') mustBe('true or false')(v, at, out)
}

/** One of several shapes, named in `desc`. */
const oneOf = (desc: string, ...ok: Array<(v: unknown) => boolean>): Check => (v, at, out) => {
  if (!ok.some((f) => f(v))) mustBe(desc)(v, at, out)
}

const arrayOf = (item: Check): Check => (v, at, out) => {
  if (!Array.isArray(v)) return mustBe('a list')(v, at, out)
  v.forEach((x, i) => item(x, `${at}.${i}`, out))
}

/** An object with these known fields (optional unless listed in `required`); other keys are free. */
function record(fields: Record<string, Check>, required: readonly string[] = []): Check {
  return (v, at, out) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return mustBe('a JSON object')(v, at, out)
    const o = v as Record<string, unknown>
    for (const [key, check] of Object.entries(fields)) {
      const value = Object.hasOwn(o, key) ? o[key] : undefined
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
    'claimed-pid': oneOf('a whole number or a string', isInt, (v) => typeof v === 'string'),
    'claimed-at': str(),
    'claimed-machine': str(),
    'claimed-start': oneOf('a string or a number', (v) => typeof v === 'string', isNumber),
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
