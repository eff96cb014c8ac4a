#!/usr/bin/env node
// A few hot read-only commands (status, tracker ready, tracker status) are
// answered without loading oclif; everything else goes through oclif.
// Development/test modes load src/ through tsx, so they always use oclif;
// HELIX_NO_FAST_PATH=1 forces oclif too (tests compare the two).
// The fast path is loaded from its bundle (dist/fast/, built by
// scripts/bundle-fast-path.mjs: a few files instead of ~21 modules), or from
// dist/cli/ when a build made no bundle.
// No process.exit() on the fast path: stdout to a pipe may be asynchronous and
// exiting early would cut a large answer short.
// Exit codes: this file sets none itself; every code helix exits with comes from
// the EXIT table in src/util/errors.ts (literals here would only be to avoid that
// import on the startup path, and must match the table).
let handled = false
const mode = process.env.NODE_ENV
if (mode !== 'development' && mode !== 'test' && process.env.HELIX_NO_FAST_PATH !== '1') {
  let fast = null
  for (const file of ['../dist/fast/fast-path.js', '../dist/cli/fast-path.js']) {
    try {
      fast = await import(file)
      break
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    }
  }
  if (fast) handled = await fast.runFastPath(process.argv.slice(2))
}
if (!handled) {
  const {execute} = await import('@oclif/core')
  await execute({dir: import.meta.url})
}
