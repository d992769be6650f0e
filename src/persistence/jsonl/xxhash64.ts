/**
 * XXH64 with seed 0, the hash whose low 32 bits a zstd frame's content checksum stores. Written
 * with pairs of 32-bit halves instead of `BigInt`, which is many times slower per byte; fzstd reads
 * frames but never checks this checksum, so the reader does.
 *
 * @module
 */

// The five 64-bit primes, as [high, low] halves.
const PRIME1_HIGH = 0x9e3779b1
const PRIME1_LOW = 0x85ebca87
const PRIME2_HIGH = 0xc2b2ae3d
const PRIME2_LOW = 0x27d4eb4f
const PRIME3_HIGH = 0x165667b1
const PRIME3_LOW = 0x9e3779f9
const PRIME4_HIGH = 0x85ebca77
const PRIME4_LOW = 0xc2b2ae63
const PRIME5_HIGH = 0x27d4eb2f
const PRIME5_LOW = 0x165667c5

/** A 64-bit value as two unsigned 32-bit halves. */
interface Word {
  high: number
  low: number
}

/** The high 32 bits of the unsigned 64-bit product of two 32-bit values. */
function multiplyHigh(a: number, b: number): number {
  const a0 = a & 0xffff
  const a1 = a >>> 16
  const b0 = b & 0xffff
  const b1 = b >>> 16
  const middle = a1 * b0 + ((a0 * b0) >>> 16)
  const other = (middle & 0xffff) + a0 * b1
  return (a1 * b1 + Math.floor(middle / 65_536) + Math.floor(other / 65_536)) >>> 0
}

/** `word = word × (high, low)` modulo 2^64. */
function multiply(word: Word, high: number, low: number): void {
  const resultHigh = (Math.imul(word.high, low) + Math.imul(word.low, high) + multiplyHigh(word.low, low)) >>> 0
  word.low = Math.imul(word.low, low) >>> 0
  word.high = resultHigh
}

/** `word = word + (high, low)` modulo 2^64. */
function add(word: Word, high: number, low: number): void {
  const sum = word.low + low
  word.low = sum >>> 0
  word.high = (word.high + high + (sum > 0xffffffff ? 1 : 0)) >>> 0
}

/** `word = word <<< bits` (0 < bits < 64, bits ≠ 32). */
function rotateLeft(word: Word, bits: number): void {
  const { high, low } = word
  if (bits < 32) {
    word.high = ((high << bits) | (low >>> (32 - bits))) >>> 0
    word.low = ((low << bits) | (high >>> (32 - bits))) >>> 0
  } else {
    const shift = bits - 32
    word.high = ((low << shift) | (high >>> (32 - shift))) >>> 0
    word.low = ((high << shift) | (low >>> (32 - shift))) >>> 0
  }
}

/** `word = word ^ (word >>> bits)` (32 < bits < 64, or 29, or 32). */
function xorShiftRight(word: Word, bits: number): void {
  if (bits >= 32) {
    word.low = (word.low ^ (word.high >>> (bits - 32))) >>> 0
  } else {
    word.low = (word.low ^ ((word.low >>> bits) | (word.high << (32 - bits)))) >>> 0
    word.high = (word.high ^ (word.high >>> bits)) >>> 0
  }
}

function readUint32(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) | ((bytes[at + 2] ?? 0) << 16) | ((bytes[at + 3] ?? 0) << 24)) >>> 0
  )
}

/** One accumulator round: add the input times the second prime, rotate left by 31, times the first prime. */
function round(accumulator: Word, bytes: Uint8Array, at: number): void {
  const input: Word = { high: readUint32(bytes, at + 4), low: readUint32(bytes, at) }
  multiply(input, PRIME2_HIGH, PRIME2_LOW)
  add(accumulator, input.high, input.low)
  rotateLeft(accumulator, 31)
  multiply(accumulator, PRIME1_HIGH, PRIME1_LOW)
}

/** Folds one lane into the hash: xor with a round of the lane from zero, times the first prime, plus the fourth. */
function mergeRound(hash: Word, lane: Word): void {
  const value: Word = { high: lane.high, low: lane.low }
  multiply(value, PRIME2_HIGH, PRIME2_LOW)
  rotateLeft(value, 31)
  multiply(value, PRIME1_HIGH, PRIME1_LOW)
  hash.high = (hash.high ^ value.high) >>> 0
  hash.low = (hash.low ^ value.low) >>> 0
  multiply(hash, PRIME1_HIGH, PRIME1_LOW)
  add(hash, PRIME4_HIGH, PRIME4_LOW)
}

/**
 * XXH64 of `bytes` with seed 0.
 *
 * @param bytes - the data
 * @returns the hash as `[high, low]` unsigned 32-bit halves
 * @internal
 */
export function xxhash64(bytes: Uint8Array): readonly [number, number] {
  const length = bytes.length
  let at = 0
  let hash: Word
  if (length >= 32) {
    const lane1: Word = { high: PRIME1_HIGH, low: PRIME1_LOW }
    add(lane1, PRIME2_HIGH, PRIME2_LOW)
    const lane2: Word = { high: PRIME2_HIGH, low: PRIME2_LOW }
    const lane3: Word = { high: 0, low: 0 }
    // The seed (0) minus the first prime, as two's complement: its bitwise not plus one.
    const lane4: Word = { high: ~PRIME1_HIGH >>> 0, low: ~PRIME1_LOW >>> 0 }
    add(lane4, 0, 1)
    for (; at + 32 <= length; at += 32) {
      round(lane1, bytes, at)
      round(lane2, bytes, at + 8)
      round(lane3, bytes, at + 16)
      round(lane4, bytes, at + 24)
    }
    hash = { high: lane1.high, low: lane1.low }
    rotateLeft(hash, 1)
    for (const [lane, bits] of [
      [lane2, 7],
      [lane3, 12],
      [lane4, 18],
    ] as const) {
      const rotated: Word = { high: lane.high, low: lane.low }
      rotateLeft(rotated, bits)
      add(hash, rotated.high, rotated.low)
    }
    for (const lane of [lane1, lane2, lane3, lane4]) mergeRound(hash, lane)
  } else {
    hash = { high: PRIME5_HIGH, low: PRIME5_LOW }
  }
  add(hash, Math.floor(length / 4_294_967_296) >>> 0, length >>> 0)
  for (; at + 8 <= length; at += 8) {
    const lane: Word = { high: 0, low: 0 }
    round(lane, bytes, at)
    hash.high = (hash.high ^ lane.high) >>> 0
    hash.low = (hash.low ^ lane.low) >>> 0
    rotateLeft(hash, 27)
    multiply(hash, PRIME1_HIGH, PRIME1_LOW)
    add(hash, PRIME4_HIGH, PRIME4_LOW)
  }
  if (at + 4 <= length) {
    const value: Word = { high: 0, low: readUint32(bytes, at) }
    multiply(value, PRIME1_HIGH, PRIME1_LOW)
    hash.high = (hash.high ^ value.high) >>> 0
    hash.low = (hash.low ^ value.low) >>> 0
    rotateLeft(hash, 23)
    multiply(hash, PRIME2_HIGH, PRIME2_LOW)
    add(hash, PRIME3_HIGH, PRIME3_LOW)
    at += 4
  }
  for (; at < length; at++) {
    const value: Word = { high: 0, low: bytes[at] ?? 0 }
    multiply(value, PRIME5_HIGH, PRIME5_LOW)
    hash.high = (hash.high ^ value.high) >>> 0
    hash.low = (hash.low ^ value.low) >>> 0
    rotateLeft(hash, 11)
    multiply(hash, PRIME1_HIGH, PRIME1_LOW)
  }
  xorShiftRight(hash, 33)
  multiply(hash, PRIME2_HIGH, PRIME2_LOW)
  xorShiftRight(hash, 29)
  multiply(hash, PRIME3_HIGH, PRIME3_LOW)
  xorShiftRight(hash, 32)
  return [hash.high, hash.low]
}

/**
 * The content checksum a zstd frame stores: the low 32 bits of XXH64 (seed 0) of its decoded bytes.
 *
 * @param decoded - the frame's content
 * @returns the unsigned 32-bit checksum
 * @internal
 */
export function zstdContentChecksum(decoded: Uint8Array): number {
  return xxhash64(decoded)[1]
}
