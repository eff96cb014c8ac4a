/**
 * oclif flags of `tracker create` / `tracker update` built from the one field
 * table (src/tracker/fields.ts). Only those two commands import it (it loads
 * @oclif/core, so it lives in src/cli, not in the tracker domain).
 */
import * as Flags from '@oclif/core/flags'
import {plainFlagFields} from '../tracker/fields.js'

function stringFlag(description: string) {
  return Flags.string({description})
}
type StringFlag = ReturnType<typeof stringFlag>

export function tableFlags(command: 'create' | 'update'): Record<string, StringFlag> {
  const out: Record<string, StringFlag> = {}
  for (const f of plainFlagFields(command)) {
    const dflt = command === 'create' ? `default: ${f.createDefault ?? 'none'}` : 'default: unchanged'
    const what = f.description ?? `sets ${f.key}`
    const description = `${what} (${dflt})`
    out[f.flag!] = f.kind === 'bool' ? (Flags.string({options: ['true', 'false'], description}) as StringFlag) : stringFlag(description)
  }
  return out
}
