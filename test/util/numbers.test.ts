import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {groupDigits} from '../../src/util/numbers.js'

const icu = (n: number) => n.toLocaleString('en-US')

describe('groupDigits', () => {
  const original = Number.prototype.toLocaleString
  afterEach(() => {
    Number.prototype.toLocaleString = original
  })

  it("prints every whole number as toLocaleString('en-US') does", () => {
    const values = [0, -0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 12_345, 123_456, 999_999, 1_000_000, 1_234_567, 10_000_000_000, Number.MAX_SAFE_INTEGER]
    for (let d = 1; d <= 16; d++) values.push(Number('7'.repeat(d)), 10 ** d, 10 ** d - 1)
    for (const n of values) {
      expect(groupDigits(n)).toBe(icu(n))
      expect(groupDigits(-n)).toBe(icu(-n))
    }
  })

  it('builds no ICU formatter for a whole number', () => {
    Number.prototype.toLocaleString = () => {
      throw new Error('ICU reached')
    }
    expect(groupDigits(1_234_567)).toBe('1,234,567')
    expect(groupDigits(-42)).toBe('-42')
  })

  it('leaves fractions and numbers past 2^53 to ICU, with the same text', () => {
    for (const n of [1234.5678, 0.5, -1234.5, 2 ** 60, Infinity, Number.NaN]) expect(groupDigits(n)).toBe(icu(n))
  })

  it("is the only way src/ groups digits (the dashboard page's browser script aside)", () => {
    const src = path.resolve(import.meta.dirname, '../../src')
    const users = readdirSync(src, {recursive: true, encoding: 'utf8'})
      .filter((f) => f.endsWith('.ts') && readFileSync(path.join(src, f), 'utf8').includes('.toLocaleString('))
      .sort()
    expect(users).toEqual(['dashboard/page.ts', 'util/numbers.ts'])
  })
})
