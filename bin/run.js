#!/usr/bin/env node
// Three ways in, cheapest first, all esbuild bundles made by `npm run build`
// (scripts/bundle.mjs):
// 1. dist/cli/fast-path.js answers a few hot exact shapes without any command class
//    (status, tracker ready / status, tracker show / close <id>);
// 2. otherwise it runs the command from its direct bundle, dist/direct/commands/
//    (src/cli/direct.ts: oclif's parser without the rest of oclif), when oclif would
//    run that command with that argv;
// 3. anything else (help, --version, a topic, a typo) goes to oclif itself,
//    dist/cli/oclif-entry.js, whose `execute` comes from the same bundled @oclif/core
//    as the commands.
// A build that made no bundle leaves the transpiled files at the same paths, which work
// the same through oclif, only slower to start.
// Development/test modes load src/ through tsx, so they always use oclif;
// HELIX_NO_FAST_PATH=1 forces oclif too (tests compare the two).
// No process.exit() on the fast path: stdout to a pipe may be asynchronous and
// exiting early would cut a large answer short.
// Exit codes: this file sets none itself; every code helix exits with comes from
// the EXIT table in src/util/errors.ts (literals here would only be to avoid that
// import on the startup path, and must match the table).
// `helix run` / `helix build`: a signal from the very first line is kept, not fatal. The
// command's own handlers (src/cli/run-signals.ts) take these off once they are in and
// act on what was kept, so the run still ends the orderly way (exit 130 / 143 / 129).
if (process.argv[2] === 'run' || process.argv[2] === 'build') {
  const kept = []
  const keep = (sig) => kept.push(sig)
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, keep)
  globalThis[Symbol.for('helix.earlySignals')] = {kept, off: () => ['SIGINT', 'SIGTERM', 'SIGHUP'].forEach((sig) => process.off(sig, keep))}
}
let handled = false
const mode = process.env.NODE_ENV
if (mode !== 'development' && mode !== 'test' && process.env.HELIX_NO_FAST_PATH !== '1') {
  const fast = await import('../dist/cli/fast-path.js')
  handled = await fast.runFastPath(process.argv.slice(2))
}
if (!handled) {
  const {execute} = await import('../dist/cli/oclif-entry.js')
  await execute({dir: import.meta.url})
}
