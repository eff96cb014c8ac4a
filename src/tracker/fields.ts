/**
 * The one table of bead fields helix knows (SPEC 2.1). It drives
 * the `--set` value parsing (ops.coerceSetValue), the list of keys helix
 * interprets (every other key keeps its original JSON text on a rewrite, SPEC
 * 13.2), and the simple string/bool flags of `tracker create` / `tracker update`.
 * No imports: the codec and the commands load it on their startup path.
 */

export type FieldKind = 'string' | 'title' | 'status' | 'priority' | 'int' | 'bool' | 'list' | 'deps' | 'id' | 'claim'

export interface FieldSpec {
  /** key in the JSON record */
  key: string
  kind: FieldKind
  /** CLI flag of create/update that sets it as given (undefined: no plain flag) */
  flag?: string
  /** property name in CreateInput / UpdateChanges */
  prop?: string
  /** `create` takes the flag */
  create?: boolean
  /** `update` takes the flag */
  update?: boolean
  description?: string
  /** what `tracker create` uses when the flag is absent (help text), when not nothing */
  createDefault?: string
}

export const FIELDS: readonly FieldSpec[] = [
  {key: 'id', kind: 'id'},
  {key: 'title', kind: 'title', flag: 'title', prop: 'title', update: true, description: 'new title'},
  {key: 'status', kind: 'status', flag: 'status', prop: 'status', update: true, description: 'open, in_progress, closed, blocked, proposed, cancelled'},
  {key: 'priority', kind: 'priority', flag: 'priority', prop: 'priority', create: true, update: true, description: 'priority 0-4 (0 highest)', createDefault: '2'},
  {key: 'issue_type', kind: 'string', flag: 'type', prop: 'type', create: true, description: 'issue type (task, epic, bug, chore, …); create defaults to task'},
  {key: 'schema_version', kind: 'int'},
  {key: 'owner', kind: 'string'},
  {key: 'created_at', kind: 'string'},
  {key: 'updated_at', kind: 'string'},
  {key: 'labels', kind: 'list'},
  {key: 'parent', kind: 'string', flag: 'parent', prop: 'parent', create: true, update: true, description: 'parent epic id; empty removes it'},
  {key: 'description', kind: 'string', flag: 'description', prop: 'description', create: true, update: true, description: 'what the bead is about'},
  {key: 'acceptance', kind: 'string', flag: 'acceptance', prop: 'acceptance', create: true, update: true, description: 'acceptance criteria'},
  {key: 'notes', kind: 'string', flag: 'notes', prop: 'notes', create: true, update: true, description: 'notes (replaces them on update)'},
  {key: 'dependencies', kind: 'deps'},
  {key: 'spec-id', kind: 'string', flag: 'spec-id', prop: 'specId', create: true, update: true, description: 'governing spec id'},
  {key: 'design', kind: 'string', flag: 'design', prop: 'design', create: true, update: true, description: 'design notes'},
  {key: 'execution-eligible', kind: 'bool', flag: 'execution-eligible', prop: 'executionEligible', create: true, update: true, description: 'false keeps the bead out of ready'},
  {key: 'superseded-by', kind: 'string', flag: 'superseded-by', prop: 'supersededBy', create: true, update: true, description: 'id of the bead that replaces this one'},
  {key: 'replaces', kind: 'string', flag: 'replaces', prop: 'replaces', create: true, update: true, description: 'id of the bead this one replaces'},
  {key: 'queue-rank', kind: 'int'},
  {key: 'claimed-at', kind: 'claim'},
  {key: 'claimed-pid', kind: 'claim'},
  {key: 'claimed-machine', kind: 'claim'},
  {key: 'claimed-start', kind: 'claim'},
  {key: 'claim-token', kind: 'claim'},
  {key: 'events', kind: 'string'},
  {key: 'closing_commit_sha', kind: 'string'},
]

export const FIELD_BY_KEY: ReadonlyMap<string, FieldSpec> = new Map(FIELDS.map((f) => [f.key, f]))

/** Keys helix reads or writes. Every other key is carried through with its original JSON text. */
export const INTERPRETED_KEYS: ReadonlySet<string> = new Set(FIELDS.map((f) => f.key))

/** Fields set by a plain string-valued flag (`--<flag> S`) of the given command. */
export function plainFlagFields(command: 'create' | 'update'): FieldSpec[] {
  return FIELDS.filter((f) => f.flag !== undefined && f[command] === true)
}

/** Free-text fields whose flag value is stored as given (no validation): the loop of create/update. */
export function verbatimFields(command: 'create' | 'update'): FieldSpec[] {
  return plainFlagFields(command).filter((f) => f.kind === 'string' && f.key !== 'issue_type')
}

/** The command input (CreateInput / UpdateChanges) for every table flag: `{[prop]: flags[flag]}`. */
export function inputFromFlags(command: 'create' | 'update', flags: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  for (const f of plainFlagFields(command)) {
    const v = flags[f.flag!]
    out[f.prop!] = typeof v === 'string' ? v : undefined
  }
  return out
}
