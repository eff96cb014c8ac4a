/** SPEC 5.6 backoff: delay(a) = min(5 · 2^(a−1), 40) seconds; HELIX_BACKOFF_SLEEP replaces it. */
export function backoffSeconds(failedAttempts: number, env: NodeJS.ProcessEnv = process.env): number {
  const override = env.HELIX_BACKOFF_SLEEP
  if (override !== undefined && override.trim() !== '') {
    const n = Number(override)
    if (Number.isFinite(n) && n >= 0) return n
  }
  const a = Math.max(1, Math.floor(failedAttempts))
  return Math.min(5 * 2 ** (a - 1), 40)
}

export const BLOCK_AFTER_ATTEMPTS = 4
