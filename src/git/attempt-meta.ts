/**
 * What helix knows about an attempt at its claim, kept on disk so it survives
 * `kill -9` (SPEC 18.2): `.helix/attempts/<id>-<n>.json` with the bead, the
 * attempt number, its branch, the base tip it started from and the drift
 * fingerprint taken at the claim. Reconciliation reads it to finish an attempt
 * a dead run left behind; `kept: true` marks a `--land none` branch, which is
 * not a leftover. Removed once the attempt's worktree and branch are gone.
 */
import {mkdir, readFile, rename, rm, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {isNotFound} from '../util/files.js'

export interface AttemptMeta {
  bead: string
  attempt: number
  branch?: string
  base_tip?: string
  started_at?: string
  /** the drift fingerprint taken at the claim (SPEC 5.5) */
  fingerprint?: Record<string, string>
  /** a `--land none` branch: kept on purpose */
  kept?: boolean
  [k: string]: unknown
}

export const attemptsDir = (root: string): string => path.join(root, '.helix', 'attempts')
const file = (root: string, bead: string, attempt: number): string => path.join(attemptsDir(root), `${bead}-${attempt}.json`)

/** atomic (temp + rename); a failure to write is not fatal for the attempt, only for a later resume */
export async function writeAttemptMeta(root: string, meta: AttemptMeta): Promise<void> {
  const f = file(root, meta.bead, meta.attempt)
  try {
    await mkdir(path.dirname(f), {recursive: true})
    const tmp = `${f}.tmp-${process.pid}`
    await writeFile(tmp, JSON.stringify(meta) + '\n')
    await rename(tmp, f)
  } catch {
    // a full disk: the attempt still runs; a resume then has no fingerprint and re-reads the bead's
  }
}

export async function readAttemptMeta(root: string, bead: string, attempt: number): Promise<AttemptMeta | null> {
  try {
    const v = JSON.parse(await readFile(file(root, bead, attempt), 'utf8')) as unknown
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as AttemptMeta) : null
  } catch (error) {
    if (isNotFound(error)) return null
    return null // torn or unreadable: treated as absent
  }
}

/**
 * Where a `--remote` attempt keeps its agent's tracker copy once the landing has put
 * the worktree's file back to HEAD (SPEC 20.2: a kill during the landing must not
 * lose the fact that the agent closed its bead).
 */
export const attemptTrackerFile = (root: string, bead: string, attempt: number): string => path.join(attemptsDir(root), `${bead}-${attempt}.beads.jsonl`)

export async function removeAttemptMeta(root: string, bead: string, attempt: number): Promise<void> {
  await rm(file(root, bead, attempt), {force: true})
  await rm(attemptTrackerFile(root, bead, attempt), {force: true})
}
