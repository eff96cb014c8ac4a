// Trial counts for *.stress.test.ts: `npm test` runs a short smoke of every stress test,
// `npm run test:stress` (HELIX_STRESS_FULL=1) the full counts.
export const STRESS_FULL = process.env.HELIX_STRESS_FULL === '1'

/** `full` trials under `npm run test:stress`, `smoke` otherwise. */
export function trials(full: number, smoke: number): number {
  return STRESS_FULL ? full : smoke
}
