// Finding a run's session log (`helix logs` without a file, and --follow switching logs).
import {readdirSync, statSync} from 'node:fs'
import path from 'node:path'
import {isNotFound} from '../util/files.js'

/** The newest `helix-*.log` in `logDir` (names carry the start time; mtime breaks ties), or null. */
export function newestSessionLog(logDir: string): string | null {
  let names: string[]
  try {
    names = readdirSync(logDir).filter((n) => /^helix-.*\.log$/.test(n))
  } catch (error) {
    // no log directory yet: no session logs. An unreadable one surfaces (it is not "no logs").
    if (isNotFound(error)) return null
    throw error
  }
  let best: {file: string; name: string; mtime: number} | null = null
  for (const name of names) {
    const file = path.join(logDir, name)
    let mtime = 0
    try {
      const st = statSync(file)
      if (!st.isFile()) continue
      mtime = st.mtimeMs
    } catch {
      // removed between readdir and stat: not a candidate
      continue
    }
    if (!best || name > best.name || (name === best.name && mtime > best.mtime)) best = {file, name, mtime}
  }
  return best?.file ?? null
}

