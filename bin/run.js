#!/usr/bin/env node
// Two ways into a command, both esbuild bundles made by `npm run build`:
// dist/cli/fast-path.js answers `status` and an agent's per-bead `tracker show/close <id>`
// without loading oclif; everything else is oclif's (dist/cli/oclif-entry.js).
// NODE_ENV=development/test loads src/ through tsx, so oclif only; so does HELIX_NO_FAST_PATH=1.
// `helix run` / `helix build`: a signal from the very first line is kept, not fatal. The
// command's own handlers (src/cli/run-signals.ts) take these off once they are in and
// act on what was kept, so the run still ends the orderly way (exit 130 / 143 / 129).
if (process.argv[2] === 'run' || process.argv[2] === 'build') {
  const kept = []
  const keep = (sig) => kept.push(sig)
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, keep)
  globalThis[Symbol.for('helix.earlySignals')] = {kept, off: () => ['SIGINT', 'SIGTERM', 'SIGHUP'].forEach((sig) => process.off(sig, keep))}
}
// a working directory deleted under the shell: one line, as for any bad input (help and --version still answer)
try {
  process.cwd()
} catch {
  if (!['help', '--help', '-h', '--version', 'version'].includes(process.argv[2] ?? 'help')) {
    process.stderr.write("helix: the current directory no longer exists (deleted or moved); cd into the project and run the command again\n")
    process.exit(1)
  }
}
const mode = process.env.NODE_ENV
const fast = mode !== 'development' && mode !== 'test' && process.env.HELIX_NO_FAST_PATH !== '1'
if (!(fast && (await (await import('../dist/cli/fast-path.js')).runFastPath(process.argv.slice(2))))) {
  await (await import('../dist/cli/oclif-entry.js')).execute({dir: import.meta.url})
}
