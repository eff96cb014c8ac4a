import {defineConfig} from 'vitest/config'

// `npm run test:agents` only (scripts/test-agents.mjs): the real claude and codex CLIs.
// The files are named *.agents.ts so the main suite's `test/**/*.test.ts` never picks them up.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/real-agents/*.agents.ts'],
    disableConsoleIntercept: true,
    testTimeout: 180_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
    pool: 'forks',
  },
})
