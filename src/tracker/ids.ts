/** Bead ids (split out of ops.ts): the id prefix from env or `.ddx/config.yaml`, and fresh random ids. */
import {randomBytes} from 'node:crypto'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT, errorMessage} from '../util/errors.js'
import type {ProjectPaths} from '../util/root.js'

/** `bead.id_prefix` from `.ddx/config.yaml` (a tiny hand parse, no YAML dependency). */
export function configPrefix(configFile: string): string | undefined {
  let text: string
  try {
    text = readFileSync(configFile, 'utf8')
  } catch (error) {
    // no config file is the normal case; an unreadable one is a real problem
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw new HelixError(`cannot read ${configFile}: ${errorMessage(error)}`, EXIT.ERROR)
  }
  let inBead = false
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '')
    if (/^\S/.test(line)) {
      inBead = /^bead\s*:\s*$/.test(line)
      const flat = /^bead\.id_prefix\s*:\s*(.+)$/.exec(line)
      if (flat) return unquote(flat[1])
      continue
    }
    if (inBead) {
      const m = /^\s+id_prefix\s*:\s*(.+)$/.exec(line)
      if (m) return unquote(m[1])
    }
  }
  return undefined
}

function unquote(s: string): string | undefined {
  const t = s.trim().replace(/^(['"])(.*)\1$/, '$2').trim()
  return t === '' ? undefined : t
}

export function idPrefix(paths: ProjectPaths, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.DDX_BEAD_PREFIX?.trim()
  if (fromEnv) return fromEnv
  return configPrefix(path.join(paths.root, '.ddx', 'config.yaml')) ?? configPrefix(path.join(paths.dir, 'config.yaml')) ?? 'hx'
}

export function newId(prefix: string, taken: (id: string) => boolean): string {
  for (;;) {
    const id = `${prefix}-${randomBytes(4).toString('hex')}`
    if (!taken(id)) return id
  }
}
