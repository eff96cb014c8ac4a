/**
 * The queue-drain bookkeeping (SPEC 5.7) as one value with pure transitions.
 * `working`: an attempt was claimed since the last drain, so every "since the last
 * build" count is zero. `idle`: the counts the drain's bounds read.
 */
export type DrainState =
  | {kind: 'working'}
  | {
      kind: 'idle'
      /** empty selections in a row where every candidate was excluded (claim conflicts) */
      spins: number
      /** consecutive BUILD answers with nothing selectable */
      builds: number
      /** DESIGN/POLISH/ALIGN passes in a row without new ready work */
      passes: number
      aligned: boolean
      backfilled: boolean
    }

export type DrainEvent =
  /** an attempt claimed its bead: "since the last build" starts again */
  | {kind: 'claimed'}
  /** a selection found only excluded beads and tries again */
  | {kind: 'spin'}
  /** check said BUILD (the caller runs orphan recovery when `breakerDue` says so) */
  | {kind: 'build'}
  /** the orphan-recovery breaker ran */
  | {kind: 'breaker'}
  /** a bounded drain pass (design, polish, alignment) ran */
  | {kind: 'pass'}
  | {kind: 'aligned'}
  | {kind: 'backfilled'}

export const START: DrainState = {kind: 'working'}

/** BUILDs in a row before the orphan-recovery breaker (SPEC 5.7) */
export const BUILDS_BEFORE_BREAKER = 2
/** bounded drain passes without new ready work (SPEC 5.7) */
export const MAX_PASSES = 3
/** empty selections retried before the queue is drained anyway */
export const MAX_SPINS = 3

function idle(s: DrainState): Extract<DrainState, {kind: 'idle'}> {
  return s.kind === 'idle' ? s : {kind: 'idle', spins: 0, builds: 0, passes: 0, aligned: false, backfilled: false}
}

export function nextDrain(s: DrainState, e: DrainEvent): DrainState {
  switch (e.kind) {
    case 'claimed':
      return START
    case 'spin': {
      const i = idle(s)
      return {...i, spins: i.spins + 1}
    }
    case 'build': {
      const i = idle(s)
      return {...i, builds: i.builds + 1}
    }
    case 'breaker':
      return {...idle(s), builds: 0}
    case 'pass': {
      const i = idle(s)
      return {...i, passes: i.passes + 1}
    }
    case 'aligned':
      return {...idle(s), aligned: true}
    case 'backfilled':
      return {...idle(s), backfilled: true}
    default: {
      const never: never = e
      throw new Error(`unhandled drain event ${JSON.stringify(never)}`)
    }
  }
}

export const spins = (s: DrainState): number => idle(s).spins
export const breakerDue = (s: DrainState): boolean => idle(s).builds >= BUILDS_BEFORE_BREAKER
export const passesExhausted = (s: DrainState): boolean => idle(s).passes >= MAX_PASSES
export const alignedSinceBuild = (s: DrainState): boolean => idle(s).aligned
export const backfilledSinceBuild = (s: DrainState): boolean => idle(s).backfilled
