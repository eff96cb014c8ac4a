// vitest setupFile for every project: the cleanup half of test/support/tmp.ts.
// Registered first, so these afterEach/afterAll run after the test file's own hooks.
import {afterAll, afterEach, beforeEach} from 'vitest'
import {lifecycle} from './tmp.js'

beforeEach(() => lifecycle.testStarts())
afterEach(() => lifecycle.testEnds())
afterAll(() => lifecycle.fileEnds())
