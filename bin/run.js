#!/usr/bin/env node
// Two ways into a command, both esbuild bundles made by `npm run build`:
// dist/cli/fast-path.js answers `status` and an agent's per-bead `tracker show/close <id>`
// without loading oclif; everything else is oclif's (dist/cli/oclif-entry.js).
// NODE_ENV=development/test loads src/ through tsx, so oclif only; so does HELIX_NO_FAST_PATH=1.
const mode = process.env.NODE_ENV
const fast = mode !== 'development' && mode !== 'test' && process.env.HELIX_NO_FAST_PATH !== '1'
if (!(fast && (await (await import('../dist/cli/fast-path.js')).runFastPath(process.argv.slice(2))))) {
  await (await import('../dist/cli/oclif-entry.js')).execute({dir: import.meta.url})
}
