/**
 * The end of a `--remote` run (SPEC 22.2): this host's run records go to
 * `refs/helix/runs/<host>` on the remote, so `helix report --remote` on any clone
 * sees the whole fleet. Never fatal: a failure is one line, and the next run pushes
 * what is missing.
 */
import {closeSync, constants, fstatSync, openSync, readFileSync} from 'node:fs'
import {runsFile} from '../state/runs-log.js'
import {pushRunRecords} from '../remote/run-records.js'
import {sanitize} from '../util/sanitize.js'

/** the file's text; only a regular file is read (a FIFO in its place would block) */
function readRegular(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), {code: 'not a regular file'})
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}

export async function shareRunRecords(o: {root: string; remote: string; env: NodeJS.ProcessEnv; host: string; scratch: string; logDir: string; log: (line: string) => void}): Promise<boolean> {
  let text: string
  try {
    text = readRegular(runsFile(o.logDir))
  } catch (error) {
    o.log(`helix: run records not pushed to ${sanitize(o.remote)}: cannot read ${sanitize(runsFile(o.logDir))} (${sanitize((error as NodeJS.ErrnoException).code ?? String(error))}); the next run pushes them`)
    return false
  }
  const r = await pushRunRecords({cwd: o.root, remote: o.remote, env: o.env, scratch: o.scratch, host: o.host, localText: text})
  if (!r.ok) o.log(`helix: run records not pushed to ${sanitize(o.remote)}: ${sanitize(r.message)}; the next run pushes them`)
  return r.ok
}
