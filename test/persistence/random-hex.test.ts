import { describe, expect, test } from 'vitest'
import { randomHex } from '../../src/persistence/random-hex.js'

describe('randomHex', () => {
  test('gives 2 × bytes lowercase hex digits, never repeating across pool refills', () => {
    const seen = new Set<string>()
    // 1,000 tokens of 16 bytes span four refills of the 4 KiB pool; 7-byte draws straddle block ends.
    for (let index = 0; index < 1_000; index++) {
      const token = randomHex(16)
      expect(token).toMatch(/^[0-9a-f]{32}$/)
      seen.add(token)
      expect(randomHex(7)).toMatch(/^[0-9a-f]{14}$/)
    }
    expect(seen.size).toBe(1_000)
    expect(randomHex(4096)).toHaveLength(8192)
  })
})
