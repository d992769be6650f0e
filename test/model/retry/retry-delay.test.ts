import { describe, expect, test } from 'vitest'
import { defaultRetryPolicy, type RetryPolicy, retryDelay } from '../../../src/model/index.js'
import { referenceDelay, referenceFnv1a32, referenceU } from './reference-fnv.js'

const noJitter: RetryPolicy = { ...defaultRetryPolicy, jitter: 0 }

describe('the reference FNV-1a', () => {
  test.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ])('hashes %j to the published test vector', (input, expected) => {
    expect(referenceFnv1a32(input)).toBe(expected)
  })
})

describe('retryDelay: exponential backoff', () => {
  test.each([
    [1, 500],
    [2, 1000],
    [3, 2000],
    [4, 4000],
    [5, 8000],
    [6, 10000],
    [7, 10000],
    [40, 10000],
    [2000, 10000],
  ])('retry %i with jitter 0 waits exactly %i ms', (retry, expected) => {
    expect(retryDelay(noJitter, { retry, seed: `s1:1:1:${retry}` })).toBe(expected)
  })

  test('the cap applies before the jitter: a capped base is still clamped to maxDelayMs', () => {
    const policy: RetryPolicy = { ...defaultRetryPolicy, initialDelayMs: 100, maxDelayMs: 250, jitter: 0 }
    expect([1, 2, 3, 4].map((retry) => retryDelay(policy, { retry, seed: 'x' }))).toEqual([100, 200, 250, 250])
  })

  test('the default jitter of 0.1 gives the FNV-1a-seeded delay, the same for the same seed', () => {
    const seeds = ['s1:1:1:1', 's1:1:1:2', 's1:1:1:3', 's1:2:1:1', ':compaction:1', 's1:conversation:1']
    const delays = seeds.map((seed) => retryDelay(defaultRetryPolicy, { retry: Number(seed.at(-1)), seed }))
    // Computed independently (python FNV-1a over UTF-8): u = 0.1047, 0.1164, 0.1125, 0.9487, 0.2276, 0.3661.
    expect(delays).toEqual([460, 923, 1845, 545, 473, 487])
    seeds.forEach((seed, index) => {
      const base = Math.min(500 * 2 ** (Number(seed.at(-1)) - 1), 10000)
      expect(delays[index]).toBe(referenceDelay(base, 0.1, 10000, seed))
    })
    expect(seeds.map((seed) => retryDelay(defaultRetryPolicy, { retry: Number(seed.at(-1)), seed }))).toEqual(delays)
  })

  test('every jittered delay stays within [base × (1 − jitter), base × (1 + jitter)]', () => {
    for (let index = 0; index < 200; index++) {
      const delay = retryDelay(defaultRetryPolicy, { retry: 1, seed: `session-${index}:1:1:1` }) as number
      expect(delay).toBeGreaterThanOrEqual(450)
      expect(delay).toBeLessThanOrEqual(550)
      expect(delay).toBe(referenceDelay(500, 0.1, 10000, `session-${index}:1:1:1`))
    }
  })

  test('a jittered delay above maxDelayMs is clamped to it', () => {
    const policy: RetryPolicy = { ...defaultRetryPolicy, initialDelayMs: 8000, maxDelayMs: 10000, jitter: 1 }
    const seeds = Array.from({ length: 400 }, (_, index) => `s${index}:1:1:1`)
    const high = seeds.filter((seed) => referenceU(seed) > 0.625)
    const low = seeds.filter((seed) => referenceU(seed) < 0.5)
    expect(high.length).toBeGreaterThan(10)
    expect(low.length).toBeGreaterThan(10)
    for (const seed of high) expect(retryDelay(policy, { retry: 1, seed })).toBe(10000)
    for (const seed of low) {
      const delay = retryDelay(policy, { retry: 1, seed }) as number
      expect(delay).toBe(Math.round(8000 * 2 * referenceU(seed)))
      expect(delay).toBeLessThan(8000)
    }
  })
})

describe('retryDelay: Retry-After', () => {
  test.each([
    [1, 1],
    [2000, 2000],
    [9999, 9999],
    [10000, 10000],
  ])('retryAfterMs %i at most maxDelayMs is used exactly (no jitter, no backoff)', (retryAfterMs, expected) => {
    expect(retryDelay(defaultRetryPolicy, { retry: 3, seed: 's1:1:1:3', retryAfterMs })).toBe(expected)
  })

  test('retryAfterMs above maxDelayMs gives up (undefined)', () => {
    expect(retryDelay(defaultRetryPolicy, { retry: 1, seed: 's1:1:1:1', retryAfterMs: 10001 })).toBeUndefined()
    expect(
      retryDelay({ ...defaultRetryPolicy, maxDelayMs: 600 }, { retry: 1, seed: 's', retryAfterMs: 601 }),
    ).toBeUndefined()
  })

  test('with honorRetryAfter false the hint is ignored, however large', () => {
    const policy: RetryPolicy = { ...noJitter, honorRetryAfter: false }
    expect(retryDelay(policy, { retry: 1, seed: 's1:1:1:1', retryAfterMs: 60000 })).toBe(500)
    expect(retryDelay(policy, { retry: 2, seed: 's1:1:1:2', retryAfterMs: 1 })).toBe(1000)
  })
})
