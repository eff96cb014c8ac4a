import {mkdtempSync, readdirSync, rmSync, statfsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {defineConfig} from 'vitest/config'
import {ProjectOrderSequencer} from './test/support/sequencer.js'
import {pidAlive} from './src/proc/process.js'

// Three projects by file name (issue 13):
//   unit   test/**/*.test.ts         fakes, real temp dirs, no built CLI
//   e2e    test/**/*.e2e.test.ts     spawns bin/run.js (dist/): one smoke test per behaviour
//   stress test/**/*.stress.test.ts  crash, concurrency, torture; a short smoke by default,
//                                    the full trial counts with HELIX_STRESS_FULL=1 (npm run test:stress)
// `npm test` builds, then runs all three; `vitest run --project unit` runs one.
// No process this suite starts talks TLS (the real-agent tests, which do, have their own
// config: test/real-agents/vitest.config.ts). Where NODE_EXTRA_CA_CERTS is set, every
// node process parses that whole CA bundle as it starts: here `node -e 0` took 60 ms of
// CPU with /etc/ssl/certs/ca-certificates.crt and 16 ms without, and the suite starts
// ~1,200 node processes (the CLI, stub agents). The workers inherit this environment,
// and so does everything they spawn.
delete process.env.NODE_EXTRA_CA_CERTS
// Every `git init` and `git clone` copies its template: by default ~16 files (sample
// hooks, description, info/exclude), each a new inode. On this machine's ext4 a suite's
// churn of created and deleted files makes each creation slow (the allocator skips
// recently deleted inodes): `git init` took 12 ms of CPU with the default template and
// 3.6 ms with this one, and the suite makes thousands of repositories, clones and bare
// remotes. The template holds only an empty hooks/ directory, so a test can still write
// a hook; helix itself never relies on the template's files.
process.env.GIT_TEMPLATE_DIR = fileURLToPath(new URL('test/fixtures/git-template', import.meta.url))
// git's housekeeping, off for every git the suite starts (helix's own included): each
// `fetch`, `commit`, `merge`, `rebase` and `am` starts `git maintenance run --auto`, and each
// push a bare remote receives starts `git gc --auto`. Neither ever had work to do in a test's
// small repositories, and together they were ~11% of the git processes of a `--land pr` file
// (192 of 1,703 in pr/pr-resolve.e2e). Passed as environment configuration
// (GIT_CONFIG_COUNT, git ≥ 2.31), so it reaches git under every HOME and GIT_CONFIG_GLOBAL a
// test sets; a test that sets its own GIT_CONFIG_COUNT replaces it.
Object.assign(process.env, {
  GIT_CONFIG_COUNT: '3',
  GIT_CONFIG_KEY_0: 'maintenance.auto',
  GIT_CONFIG_VALUE_0: 'false',
  GIT_CONFIG_KEY_1: 'gc.auto',
  GIT_CONFIG_VALUE_1: '0',
  GIT_CONFIG_KEY_2: 'receive.autoGc',
  GIT_CONFIG_VALUE_2: 'false',
})

// The suite's scratch: one private directory, the TMPDIR of the workers and of everything they
// start, on a memory file system where the machine has one with room (/dev/shm), else under
// the TMPDIR it was given. The suite makes and removes tens of thousands of files (repositories,
// clones, worktrees, bare remotes). On this machine's ext4, which has no journal, each new
// inode is found by skipping every recently deleted one (`recently_deleted` in the kernel's
// allocator): ~10% of the suite's CPU went there, and file system work was ~40% of it
// (docs/performance.md, "Session 31: the suite's scratch on a memory file system").
// Nothing may be left in it: at exit an entry left there fails the run and is named
// (a test that did not remove what it made), and the directory goes. HELIX_TEST_SCRATCH=disk
// keeps it under the TMPDIR given.
const MIN_FREE = 2 ** 30 // the suite's scratch peaked at ~40 MB; a container's default 64 MB /dev/shm is passed over
function scratchBase(): string {
  if (process.env.HELIX_TEST_SCRATCH === 'disk') return tmpdir()
  try {
    const fs = statfsSync('/dev/shm')
    if (fs.bavail * fs.bsize >= MIN_FREE) return '/dev/shm'
  } catch {
    // no /dev/shm here
  }
  return tmpdir()
}
/** scratch directories of suites that were killed (their pid, in the name, is gone): removed */
function removeOrphans(base: string): void {
  let names: string[] = []
  try {
    names = readdirSync(base)
  } catch {
    return
  }
  for (const name of names) {
    const pid = /^helix-suite-(\d+)-/.exec(name)?.[1]
    if (!pid) continue
    if (!pidAlive(Number(pid))) rmSync(path.join(base, name), {recursive: true, force: true})
  }
}
if (!process.env.HELIX_SUITE_SCRATCH) {
  const base = scratchBase()
  removeOrphans(base)
  const scratch = mkdtempSync(path.join(base, `helix-suite-${process.pid}-`))
  process.env.HELIX_SUITE_SCRATCH = scratch
  process.env.TMPDIR = scratch
  process.on('exit', () => {
    let left: string[] = []
    try {
      left = readdirSync(scratch)
    } catch {
      return
    }
    if (left.length > 0) {
      process.stderr.write(`helix suite: ${left.length} entries left in the suite's TMPDIR ${scratch} (a test did not remove what it made): ${left.slice(0, 10).join(', ')}\n`)
      process.exitCode = 1
    }
    rmSync(scratch, {recursive: true, force: true})
  })
}

const E2E = 'test/**/*.e2e.test.ts'
const STRESS = 'test/**/*.stress.test.ts'

export default defineConfig({
  test: {
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests spawn real processes; two cores, so keep parallelism modest.
    maxWorkers: 4,
    pool: 'forks',
    // A fresh fork per file cost ~0.2 CPU-s each (90 files, 2 cores): the forks are
    // reused instead. A test that changes process.env or other global state restores it.
    isolate: false,
    setupFiles: ['test/support/setup.ts'],
    // stress, unit, then e2e: see test/support/sequencer.ts
    sequence: {sequencer: ProjectOrderSequencer},
    projects: [
      {extends: true, test: {name: 'unit', include: ['test/**/*.test.ts'], exclude: [E2E, STRESS, '**/node_modules/**']}},
      {extends: true, test: {name: 'e2e', include: [E2E], globalSetup: ['test/support/dist-guard.ts']}},
      {extends: true, test: {name: 'stress', include: [STRESS], globalSetup: ['test/support/dist-guard.ts'], testTimeout: 600_000}},
    ],
  },
})
