/**
 * Token counts and other whole numbers as helix prints them: `1,234,567`, the en-US
 * grouping. `toLocaleString('en-US')` printed the same, but its first call in a process
 * builds ICU's number formatter, ~30 ms of CPU (Node 20.20, measured in session 30):
 * about a fifth of a `helix status`, and paid again by every `helix run`.
 * A whole number is grouped by hand; anything else (never a token count) still goes
 * through ICU, so the printed text is the same in every case.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US')
  const digits = String(Math.abs(n))
  let out = ''
  for (let end = digits.length; end > 0; end -= 3) out = digits.slice(Math.max(0, end - 3), end) + (out === '' ? '' : ',' + out)
  return n < 0 || Object.is(n, -0) ? '-' + out : out
}
