// What `npm pack` would ship (dry run, no network, no prepack build: `npm test`
// has already built dist/ and the manifest). Installing the tarball for real needs
// the registry for dependencies, so that check is done by hand (see the README's
// Install section and the demo helper's report).
import {spawnSync} from 'node:child_process'
import {realpathSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const REPO = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..'))

describe('npm pack', () => {
  it('ships the built CLI, its manifest, workflows, docs, the demo fixtures and install.sh — and no sources or tests', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: REPO, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    const files: Array<{path: string; mode: number}> = JSON.parse(r.stdout)[0].files
    const paths = new Set(files.map((f) => f.path))
    for (const p of [
      'bin/run.js',
      'oclif.manifest.json',
      'dist/commands/run.js',
      'dist/commands/status.js',
      'dist/commands/tracker/ready.js',
      // bin/run.js's two ways in
      'dist/cli/fast-path.js',
      'dist/cli/oclif-entry.js',
      'workflows/actions/implementation.md',
      'workflows/actions/check.md',
      'workflows/actions/fresh-eyes-review.md',
      'fixtures/demo/.ddx/beads.jsonl',
      'fixtures/demo/.ddx/config.yaml',
      'fixtures/agents/demo-agent.mjs',
      'scripts/install.sh',
      'README.md',
      'docs/architecture.md',
      'docs/decisions.md',
    ]) {
      expect(paths.has(p), `${p} missing from the package`).toBe(true)
    }
    for (const p of paths) {
      expect(p.startsWith('src/') || p.startsWith('test/') || p.startsWith('node_modules/'), `${p} should not be packed`).toBe(false)
    }
    // executables keep their x bit
    const mode = (p: string) => files.find((f) => f.path === p)?.mode ?? 0
    expect(mode('bin/run.js') & 0o111).not.toBe(0)
    expect(mode('scripts/install.sh') & 0o111).not.toBe(0)
    expect(mode('fixtures/agents/demo-agent.mjs') & 0o111).not.toBe(0)
  })
})
