/** Queue-drift fingerprint (SPEC 5.5): the governance fields of a bead. */
import type {Bead} from '../tracker/types.js'

export interface Fingerprint {
  'spec-id': string
  parent: string
  'superseded-by': string
  replaces: string
  deps: string
  'execution-eligible': string
}

function norm(v: unknown): string {
  if (v === undefined || v === null) return ''
  return typeof v === 'string' ? v : JSON.stringify(v)
}

/** Missing and empty string are the same value (real trackers carry `"spec-id": ""`). */
export function fingerprint(b: Bead): Fingerprint {
  const deps = (b.dependencies ?? []).map((d) => String(d.depends_on_id)).sort()
  return {
    'spec-id': norm(b['spec-id']),
    parent: norm(b.parent),
    'superseded-by': norm(b['superseded-by']),
    replaces: norm(b.replaces),
    deps: JSON.stringify(deps),
    'execution-eligible': norm(b['execution-eligible']),
  }
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return (Object.keys(a) as Array<keyof Fingerprint>).every((k) => a[k] === b[k])
}

/** Names of the fields that differ (for the session log). */
export function fingerprintDiff(a: Fingerprint, b: Fingerprint): string[] {
  return (Object.keys(a) as Array<keyof Fingerprint>).filter((k) => a[k] !== b[k])
}
