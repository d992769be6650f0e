/**
 * An independent FNV-1a 32-bit reference for the retry tests: BigInt arithmetic over the UTF-8
 * bytes from `Buffer`, so it shares no code path with the library's `Math.imul` version.
 *
 * @module
 */

const offsetBasis = 2166136261n
const prime = 16777619n
const mask = 0xffffffffn

/** FNV-1a 32-bit of the UTF-8 bytes of `text`, computed with BigInt. */
export function referenceFnv1a32(text: string): number {
  let hash = offsetBasis
  for (const byte of Buffer.from(text, 'utf8')) {
    hash = ((hash ^ BigInt(byte)) * prime) & mask
  }
  return Number(hash)
}

/** The jitter fraction `u` ∈ [0, 1) for a seed. */
export function referenceU(seed: string): number {
  return referenceFnv1a32(seed) / 4294967296
}

/** The jittered retry delay computed from first principles (JS `Math.round` half-up). */
export function referenceDelay(base: number, jitter: number, maxDelayMs: number, seed: string): number {
  const raw = Math.round(base * (1 + jitter * (2 * referenceU(seed) - 1)))
  return Math.min(Math.max(raw, 0), maxDelayMs)
}
