// The order vitest hands test files to its workers. Its own sequencer runs the projects
// one after another in name order (e2e, stress, unit), so the longest files, the stress
// smoke tests (10-25 s each, much of it waiting on processes and locks), started ~75 s
// into a run and set its end. Here the projects go stress, unit, e2e: the stress files
// first, then unit (a few long files among many instant ones), then e2e, whose many
// files of 3-10 s fill the workers at the end. Within a project vitest's order stands
// (the slowest first by its cache, else the largest file). The projects stay in
// blocks: a worker serves one project, and interleaving them made vitest start ~30
// more worker processes (~1 CPU-s each).
import {BaseSequencer, type TestSpecification} from 'vitest/node'

const RANK: Record<string, number> = {stress: 0, unit: 1, e2e: 2}

export class ProjectOrderSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (f: TestSpecification) => RANK[f.project.name] ?? 3
    return sorted
      .map((f, i) => ({f, i}))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map((x) => x.f)
  }
}
