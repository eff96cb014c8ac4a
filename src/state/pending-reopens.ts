/**
 * Reopens helix owes (SPEC 18.1a): a bead an attempt had closed, whose attempt
 * ended without landing, and whose reopen could not be written (the tracker was
 * locked, the disk full). Kept in `.helix/pending-reopens.json` beside the run
 * state (whose writer is the run's ledger), and finished at the next start
 * (SPEC 18.2). A list of `{bead, note, at}`; one entry per bead, the newest wins.
 */
import {mkdir, readFile, rename, writeFile} from 'node:fs/promises'
import path from 'node:path'

export interface PendingReopen {
  bead: string
  /** the note to write: `NOT LANDED [<ts>]: <why>; work kept at <ref>` */
  note: string
  at: string
}

export const pendingReopensFile = (root: string): string => path.join(root, '.helix', 'pending-reopens.json')

export async function readPendingReopens(root: string): Promise<PendingReopen[]> {
  try {
    const v = JSON.parse(await readFile(pendingReopensFile(root), 'utf8')) as unknown
    return Array.isArray(v) ? v.filter((p): p is PendingReopen => typeof p?.bead === 'string' && typeof p?.note === 'string') : []
  } catch {
    // absent or torn: nothing owed that we can read
    return []
  }
}

async function save(root: string, list: PendingReopen[]): Promise<void> {
  const f = pendingReopensFile(root)
  await mkdir(path.dirname(f), {recursive: true})
  const tmp = `${f}.tmp-${process.pid}`
  await writeFile(tmp, JSON.stringify(list) + '\n')
  await rename(tmp, f)
}

export async function addPendingReopen(root: string, p: PendingReopen): Promise<void> {
  const list = (await readPendingReopens(root)).filter((x) => x.bead !== p.bead)
  await save(root, [...list, p])
}

export async function removePendingReopen(root: string, bead: string): Promise<void> {
  const list = await readPendingReopens(root)
  if (list.some((x) => x.bead === bead)) await save(root, list.filter((x) => x.bead !== bead))
}
