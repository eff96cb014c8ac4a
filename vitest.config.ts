import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests spawn real processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    pool: 'forks',
  },
})
