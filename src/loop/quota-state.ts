/**
 * The quota pause (SPEC 14.3) as one value with pure transitions.
 *   healthy  — the last dispatch answered normally
 *   holding  — a quota answer came in: no slot starts an attempt; the pause is being planned
 *   paused   — sleeping until `until`
 *   probing  — the sleep is over; the next dispatch is the probe. The window (start,
 *              probes) is kept until a dispatch answers normally.
 */
export type QuotaState =
  | {kind: 'healthy'}
  | {kind: 'holding'; start: Date; probe: number}
  | {kind: 'paused'; start: Date; probe: number; until: Date}
  | {kind: 'probing'; start: Date; probe: number}

export type QuotaEvent =
  | {kind: 'ok'}
  | {kind: 'quota'; now: Date}
  /** the pause was planned: sleep until `until`; a pause without a reset time is a probe */
  | {kind: 'sleep'; until: Date; probed: boolean}
  /** the sleep ended (or the pause was given up) */
  | {kind: 'resume'}

export const HEALTHY: QuotaState = {kind: 'healthy'}

export function nextQuota(s: QuotaState, e: QuotaEvent): QuotaState {
  switch (e.kind) {
    case 'ok':
      // a healthy answer while another slot sleeps out its pause does not end that pause
      return s.kind === 'paused' || s.kind === 'holding' ? s : HEALTHY
    case 'quota':
      return s.kind === 'healthy' ? {kind: 'holding', start: e.now, probe: 0} : s.kind === 'probing' ? {kind: 'holding', start: s.start, probe: s.probe} : s
    case 'sleep': {
      if (s.kind === 'healthy') return s
      return {kind: 'paused', start: s.start, probe: e.probed ? s.probe + 1 : s.probe, until: e.until}
    }
    case 'resume':
      return s.kind === 'healthy' ? s : {kind: 'probing', start: s.start, probe: s.probe}
    default: {
      const never: never = e
      throw new Error(`unhandled quota event ${JSON.stringify(never)}`)
    }
  }
}

/** no slot starts an attempt */
export const holdsDispatch = (s: QuotaState): boolean => s.kind === 'holding' || s.kind === 'paused'

/** the window a pause plan is bounded from (SPEC 14.3: the whole pause, probes included) */
export function windowOf(s: QuotaState, now: Date): {start: Date; probe: number} {
  return s.kind === 'healthy' ? {start: now, probe: 0} : {start: s.start, probe: s.probe}
}
