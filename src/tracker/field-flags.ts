/**
 * oclif flags of `tracker create` / `tracker update` built from the one field
 * table (fields.ts). Only those two commands import it (it loads @oclif/core).
 */
import {Flags} from '@oclif/core'
import {plainFlagFields} from './fields.js'

function stringFlag(description?: string) {
  return Flags.string(description ? {description} : {})
}
type StringFlag = ReturnType<typeof stringFlag>

export function tableFlags(command: 'create' | 'update'): Record<string, StringFlag> {
  const out: Record<string, StringFlag> = {}
  for (const f of plainFlagFields(command)) {
    const description = f.description ?? (f.key === f.flag ? undefined : `sets ${f.key}`)
    out[f.flag!] = f.kind === 'bool' ? (Flags.string({options: ['true', 'false'], ...(description ? {description} : {})}) as StringFlag) : stringFlag(description)
  }
  return out
}
