/**
 * zod schema of the known bead fields (SPEC 2.1); unknown keys pass through.
 * Loaded lazily (zod costs ~48 ms of startup): only write paths and doctor
 * call `beadProblems`; the read path of ready/status never does.
 */
import type {Bead} from './types.js'

type Zod = typeof import('zod')
let cached: Promise<{schema: import('zod').ZodType}> | undefined

async function build(): Promise<{schema: import('zod').ZodType}> {
  const {z} = (await import('zod')) as Zod
  const str = z.string()
  const dependency = z.looseObject({
    issue_id: str,
    depends_on_id: str.min(1),
    type: str,
    created_at: str.optional(),
  })
  const schema = z.looseObject({
    id: str.min(1),
    title: str.optional(),
    status: str.optional(),
    priority: z.number().int().min(0).max(4).optional(),
    issue_type: str.optional(),
    schema_version: z.number().int().optional(),
    owner: str.optional(),
    created_at: str.optional(),
    updated_at: str.optional(),
    labels: z.array(str).optional(),
    parent: str.optional(),
    description: str.optional(),
    acceptance: str.optional(),
    notes: str.optional(),
    dependencies: z.array(dependency).optional(),
    'execution-eligible': z.boolean().optional(),
    'queue-rank': z.number().int().optional(),
    'claimed-pid': z.union([z.number().int(), str]).optional(),
    'claimed-at': str.optional(),
    'claimed-machine': str.optional(),
    'claimed-start': z.union([str, z.number()]).optional(),
    'claim-token': str.optional(),
    'spec-id': str.optional(),
    'superseded-by': str.optional(),
    replaces: str.optional(),
    design: str.optional(),
  })
  return {schema}
}

/** Human-readable problems with a bead's known fields ([] when fine). */
export async function beadProblems(b: Bead): Promise<string[]> {
  cached ??= build()
  const {schema} = await cached
  const r = schema.safeParse(b)
  if (r.success) return []
  return r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(record)'}: ${i.message}`)
}
