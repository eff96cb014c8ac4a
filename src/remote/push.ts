/**
 * `git push --porcelain` as data (SPEC 19.1, 20.1). The parsing and the
 * classification (race, unreachable, rejected, conflict) live in the typed git
 * layer (`src/git/repo.ts`); this module keeps the names the remote code uses.
 */
import {classifyPush, refLine, type PushedRef, type PushResult} from '../git/repo.js'

export {refLine, type PushedRef, type PushResult}

/** kept for callers of the first version: the typed answer of one push */
export const parsePorcelain = classifyPush

export const accepted = (p: PushResult, to: string): boolean => {
  const l = refLine(p, to)
  return l !== undefined && l.flag !== '!'
}
