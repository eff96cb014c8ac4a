// vitest setupFile for every project: the cleanup half of test/support/tmp.ts.
// Registered first, so these afterEach/afterAll run after the test file's own hooks.
import {afterAll, afterEach, beforeAll, beforeEach, expect} from 'vitest'
import {cpuLogEnds, cpuLogStarts} from './cpu-log.js'
import {lifecycle} from './tmp.js'

beforeAll(() => cpuLogStarts())
beforeEach(() => lifecycle.testStarts())
afterEach(() => lifecycle.testEnds())
afterAll(() => {
  lifecycle.fileEnds()
  cpuLogEnds(expect.getState().testPath ?? '?')
})
