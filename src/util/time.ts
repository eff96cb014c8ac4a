/** The two local-time formats helix prints and names files with. */

const pad = (n: number) => String(n).padStart(2, '0')

/** Local wall-clock `HH:MM:SS`: the `[t]` of SPEC 6.1/6.2 and the status header. */
export function hhmmss(d: Date): string {
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

/** Local `YYYYMMDD-HHMMSS`: the stamp in `.helix-logs/` file names (helix-, blockers-, start-). */
export function fileStamp(d: Date): string {
  return `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}-${hhmmss(d).replaceAll(':', '')}`
}
