// The order vitest hands test files to its workers. Its own sequencer runs the projects
// one after another in name order (e2e, stress, unit), so the longest files, the stress
// smoke tests (10-25 s each, much of it waiting on processes and locks), started ~75 s
// into a run and set its end. Here the longest go first, so the many short files fill
// the workers at the end:
// - when vitest's cache knows every file's last duration (any machine that has run the
//   suite before): the longer first, whatever its project;
// - otherwise (a fresh clone, CI): stress, then unit (a few long files among many
//   instant ones), then e2e (many of 3-10 s), each in vitest's own order.
import path from 'node:path'
import {BaseSequencer, type TestSpecification} from 'vitest/node'

const RANK: Record<string, number> = {stress: 0, unit: 1, e2e: 2}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const {cache, config} = this.ctx
    const duration = (f: TestSpecification) => cache.getFileTestResults(`${f.project.name}:${path.relative(config.root, f.moduleId)}`)?.duration
    const rank = (f: TestSpecification) => RANK[f.project.name] ?? 3
    const known = sorted.map((f, i) => ({f, i, d: duration(f)}))
    const byDuration = known.every((x) => x.d !== undefined)
    return known.sort((a, b) => (byDuration ? b.d! - a.d! : rank(a.f) - rank(b.f)) || a.i - b.i).map((x) => x.f)
  }
}
