import {chmodSync, writeFileSync} from 'node:fs'
import path from 'node:path'

/** The README's kind of hand-written agent in `dir`: implementation and check, no review. */
export function noReviewAgent(dir: string): string {
  const file = path.join(dir, 'agent.sh')
  writeFileSync(
    file,
    [
      '#!/usr/bin/env bash',
      'cat >/dev/null',
      'case "$HELIX_ACTION" in',
      '  implementation) helix tracker close "$HELIX_BEAD_ID" ;;',
      '  check) echo "NEXT_ACTION: STOP" ;;',
      '  *) echo "done" ;;',
      'esac',
      '',
    ].join('\n'),
  )
  chmodSync(file, 0o755)
  return file
}
