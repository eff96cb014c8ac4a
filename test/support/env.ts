// The one environment scrubber for everything a test spawns (the built CLI, the
// in-process runner's agents): the test runner's own HELIX_* and DDX_* variables
// (an operator's claim token, a bead dir, a lock timeout…) never leak into a child,
// git never reads the machine's hooks dir through GIT_DIR and friends, and no test pays
// the real 10 s SIGTERM → SIGKILL grace.
export const KILL_GRACE_MS = '500'

const GIT_LOCATION = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY']

/**
 * `process.env` without HELIX_* / DDX_* (except what `extra` sets) and without git's
 * location variables, plus `NODE_ENV=production` and `HELIX_KILL_GRACE_MS=500`
 * (both overridable through `extra`).
 */
export function testEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env}
  for (const k of Object.keys(env)) if (k.startsWith('HELIX_') || k.startsWith('DDX_') || GIT_LOCATION.includes(k)) delete env[k]
  return {...env, NODE_ENV: 'production', HELIX_KILL_GRACE_MS: KILL_GRACE_MS, ...extra}
}
