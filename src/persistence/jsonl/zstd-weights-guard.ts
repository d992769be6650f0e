/**
 * A guard in front of fzstd: a damaged Huffman weight table in a compressed block can send fzstd's
 * weight decoder into a loop that never ends (its states stop consuming bits, and it bounds the
 * weights only after the loop), so one flipped bit made a load hang. This walks the same steps as
 * fzstd's table reader up to the weights, with the bound inside the loop, and tells which frames
 * fzstd must not be given.
 *
 * @module
 */

/** More weights than this can never be valid (zstd allows 255). */
const MAXIMUM_WEIGHTS = 255
const WEIGHTS_ACCURACY_LOG = 6

function highestBit(value: number): number {
  let bits = 0
  while (1 << bits <= value) bits++
  return bits - 1
}

function byteAt(bytes: Uint8Array, at: number): number {
  return bytes[at] ?? 0
}

interface FseTable {
  readonly accuracyLog: number
  readonly symbols: Uint8Array
  readonly bits: Uint8Array
  readonly next: Uint16Array
}

/**
 * fzstd's FSE table reader, step for step; `undefined` wherever fzstd throws (the decode then
 * fails by itself, no guard needed).
 */
function readFseTable(
  bytes: Uint8Array,
  start: number,
): { readonly end: number; readonly table: FseTable } | undefined {
  let position = (start << 3) + 4
  const accuracyLog = (byteAt(bytes, start) & 15) + 5
  if (accuracyLog > WEIGHTS_ACCURACY_LOG) return undefined
  const size = 1 << accuracyLog
  let remaining = size
  let symbol = -1
  let high = size
  // One buffer seen as signed counts and as unsigned next states, as fzstd shares it.
  const shared = new ArrayBuffer(512)
  const counts = new Int16Array(shared, 0, 256)
  const states = new Uint16Array(shared, 0, 256)
  const symbols = new Uint8Array(size)
  const bits = new Uint8Array(size)
  const next = new Uint16Array(size)
  while (symbol < 255 && remaining > 0) {
    const width = highestBit(remaining + 1)
    const at = position >> 3
    const mask = (1 << (width + 1)) - 1
    let value =
      ((byteAt(bytes, at) | (byteAt(bytes, at + 1) << 8) | (byteAt(bytes, at + 2) << 16)) >> (position & 7)) & mask
    const lowMask = (1 << width) - 1
    const smallMaximum = mask - remaining - 1
    const small = value & lowMask
    if (small < smallMaximum) {
      position += width
      value = small
    } else {
      position += width + 1
      if (value > lowMask) value -= smallMaximum
    }
    value--
    symbol++
    if (symbol < 256) counts[symbol] = value
    if (value === -1) {
      remaining += value
      high--
      if (high >= 0 && high < size) symbols[high] = symbol
    } else {
      remaining -= value
    }
    if (value === 0) {
      let repeat: number
      do {
        const at2 = position >> 3
        repeat = ((byteAt(bytes, at2) | (byteAt(bytes, at2 + 1) << 8)) >> (position & 7)) & 3
        position += 2
        symbol += repeat
      } while (repeat === 3)
    }
  }
  if (symbol > 255 || remaining !== 0) return undefined
  let spread = 0
  const step = (size >> 1) + (size >> 3) + 3
  const mask = size - 1
  for (let each = 0; each <= symbol; each++) {
    const count = counts[each] ?? 0
    if (count < 1) {
      states[each] = -count
      continue
    }
    for (let index = 0; index < count; index++) {
      symbols[spread] = each
      // fzstd's own spread loop; it ends because the step is coprime with the size and high > 0 here.
      let guard = 0
      do {
        spread = (spread + step) & mask
      } while (spread >= high && ++guard <= size)
      if (guard > size) return undefined
    }
  }
  if (spread !== 0) return undefined
  for (let index = 0; index < size; index++) {
    const symbolOf = symbols[index] ?? 0
    const state = states[symbolOf] ?? 0
    states[symbolOf] = state + 1
    const width = accuracyLog - highestBit(state)
    bits[index] = width
    next[index] = (state << width) - size
  }
  return { end: (position + 7) >> 3, table: { accuracyLog, symbols, bits, next } }
}

/** Whether fzstd's weight decoder would run past the bound on the description at `start`. */
function weightsRunAway(bytes: Uint8Array, start: number): boolean {
  const headerByte = byteAt(bytes, start)
  if (headerByte >= 128) return false
  const read = readFseTable(bytes, start + 1)
  if (read === undefined) return false
  const { table } = read
  const last = start + headerByte
  const lastByte = byteAt(bytes, last)
  if (lastByte === 0) return false
  const end = read.end << 3
  let position = ((last + 1) << 3) - 8 + highestBit(lastByte)
  let state1 = 0
  let state2 = 0
  let bits1 = table.accuracyLog
  let bits2 = bits1
  let count = -1
  for (;;) {
    position -= bits1
    if (!(position >= end)) break
    let at = position >> 3
    state1 += ((byteAt(bytes, at) | (byteAt(bytes, at + 1) << 8)) >> (position & 7)) & ((1 << bits1) - 1)
    if (++count > MAXIMUM_WEIGHTS) return true
    position -= bits2
    if (!(position >= end)) break
    at = position >> 3
    state2 += ((byteAt(bytes, at) | (byteAt(bytes, at + 1) << 8)) >> (position & 7)) & ((1 << bits2) - 1)
    if (++count > MAXIMUM_WEIGHTS) return true
    // Out-of-table states read as undefined in fzstd: NaN positions that never end the loop.
    const nextBits1 = table.bits[state1]
    const nextBits2 = table.bits[state2]
    const nextState1 = table.next[state1]
    const nextState2 = table.next[state2]
    if (nextBits1 === undefined || nextBits2 === undefined || nextState1 === undefined || nextState2 === undefined)
      return true
    bits1 = nextBits1
    state1 = nextState1
    bits2 = nextBits2
    state2 = nextState2
  }
  return false
}

/**
 * Whether any compressed block of the frame at the start of `frame` carries a Huffman weight
 * description that fzstd's decoder would never finish reading. Blocks are walked by their headers
 * up to the last block or the end of the bytes (an incomplete frame is checked as far as it goes).
 *
 * @param frame - the frame's bytes, from its magic (possibly cut short)
 * @returns `true` when fzstd must not be given the frame
 * @internal
 */
export function zstdWeightsRunAway(frame: Uint8Array): boolean {
  const descriptor = byteAt(frame, 4)
  const singleSegment = (descriptor >> 5) & 1
  const contentSizeFlag = descriptor >> 6
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] ?? 0
  let at =
    5 + (singleSegment ? 0 : 1) + dictionaryBytes + (contentSizeFlag === 0 ? singleSegment : 1 << contentSizeFlag)
  while (at + 3 <= frame.length) {
    const header = byteAt(frame, at) | (byteAt(frame, at + 1) << 8) | (byteAt(frame, at + 2) << 16)
    const type = (header >> 1) & 3
    if (type === 2) {
      const literals = at + 3
      const first = byteAt(frame, literals)
      if ((first & 3) === 2) {
        const format = (first >> 2) & 3
        const headerBytes = format < 2 ? 3 : format === 2 ? 4 : 5
        if (weightsRunAway(frame, literals + headerBytes)) return true
      }
    }
    if (header & 1) break
    at += 3 + (type === 1 ? 1 : header >>> 3)
  }
  return false
}
