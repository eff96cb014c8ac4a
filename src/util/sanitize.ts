/**
 * The one sanitizer for untrusted text on a terminal (SPEC 13.5). Everything helix
 * prints that came from the tracker, run-state, an agent or the environment goes
 * through `sanitize` (one line) or `sanitizeBlock` (keeps line breaks), in every
 * command and every mode. `--json` output is data, not terminal text, and is never
 * altered.
 *
 * - C0/C1 control characters (ESC, BEL, CR, NUL, DEL, 0x80–0x9f) become `?`;
 * - bidi controls (U+202A–202E, U+2066–2069) and U+2028/2029 become `?`;
 * - an embedded newline becomes `⏎`, so one record stays one line.
 * Tabs become a space: they are harmless, but would break column layouts.
 */

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g

/** One line of untrusted text, safe to print. */
export function sanitize(text: unknown): string {
  const s = typeof text === 'string' ? text : text === null || text === undefined ? '' : String(text)
  return s.replace(/\r?\n/g, '⏎').replace(/\t/g, ' ').replace(UNSAFE, '?')
}

/** Untrusted text that may span lines (e.g. `tracker show` descriptions): newlines and tabs kept. */
export function sanitizeBlock(text: unknown): string {
  const s = typeof text === 'string' ? text : text === null || text === undefined ? '' : String(text)
  return s.replace(/\r\n/g, '\n').replace(UNSAFE, '?')
}
