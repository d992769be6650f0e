import { spawnSync } from 'node:child_process'
import * as wasmZstd from '@foxglove/wasm-zstd'
import { beforeAll, describe, expect, it } from 'vitest'
import { ErrorCode } from '../../src/errors/codes.js'
import { ConfigError } from '../../src/errors/config-error.js'
import { gzipCodec, zstdCodec } from '../../src/persistence/jsonl/frame-codec.js'
import type { FrameWalk } from '../../src/persistence/jsonl/frame-walk.js'
import { crc32 } from '../../src/persistence/jsonl/crc32.js'
import { decodeGzipMembers, encodeGzipFrame } from '../../src/persistence/jsonl/gzip-frames.js'
import {
  createZstdEncoder,
  decodeZstdFrames,
  type HostZstdEncoder,
  readZstdFrameLayout,
  zstdAvailable,
} from '../../src/persistence/jsonl/zstd-frames.js'

const encoder = new TextEncoder()

/** Deterministic printable text that compresses poorly (an LCG picks each character). */
function randomText(length: number, seed: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}":,'
  let state = seed >>> 0
  let text = ''
  for (let index = 0; index < length; index++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    text += alphabet[state % alphabet.length]
  }
  return text
}

function jsonLines(count: number, firstSeq: number): string {
  let text = ''
  for (let seq = firstSeq; seq < firstSeq + count; seq++) {
    text += `${JSON.stringify({ type: 'test/note', seq, time: 1_700_000_000_000 + seq, data: { text: `note ${seq} ü😀`, n: seq * 31 } })}\n`
  }
  return text
}

const TEXTS = [
  `${JSON.stringify({ type: 'session', version: 1, id: 's1', createdAt: '2025-01-01T00:00:00.000Z' })}\n`,
  jsonLines(12, 0),
  `${jsonLines(3, 12)}${randomText(600, 7)}\n`,
].map((text) => encoder.encode(text))

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts))
}

function isPrefix(prefix: Uint8Array, of: Uint8Array): boolean {
  return prefix.length <= of.length && Buffer.from(of.subarray(0, prefix.length)).equals(Buffer.from(prefix))
}

function commandExists(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0
}

/**
 * Cuts `file` at every byte offset and checks the walk: the frames complete at the cut, then
 * (unless the cut is on a boundary) an incomplete defect whose salvage is a prefix of its text.
 */
function checkEveryCut(
  file: Uint8Array,
  parts: readonly Uint8Array[],
  texts: readonly Uint8Array[],
  walk: (bytes: Uint8Array) => FrameWalk,
): number {
  const starts: number[] = []
  let end = 0
  for (const part of parts) {
    starts.push(end)
    end += part.length
  }
  let salvagedCuts = 0
  for (let cut = 0; cut <= file.length; cut++) {
    const result = walk(file.subarray(0, cut))
    const complete = parts.filter((part, index) => (starts[index] ?? 0) + part.length <= cut).length
    expect(result.frames.length, `cut ${cut}`).toBe(complete)
    result.frames.forEach((frame, index) => {
      expect(frame.offset).toBe(starts[index])
      expect(frame.length).toBe(parts[index]?.length)
      expect(Buffer.from(frame.decoded).equals(Buffer.from(texts[index] ?? new Uint8Array(0)))).toBe(true)
    })
    if (cut === (starts[complete] ?? file.length) || cut === file.length) {
      expect(result.defect, `cut ${cut}`).toBeUndefined()
      continue
    }
    const defect = result.defect
    expect(defect, `cut ${cut}`).toBeDefined()
    expect(defect?.kind).toBe('frame')
    expect(defect?.reason, `cut ${cut}`).toBe('incomplete')
    expect(defect?.offset).toBe(starts[complete])
    expect(defect?.laterDecodableFrameOffsets).toEqual([])
    const text = texts[complete] ?? new Uint8Array(0)
    expect(isPrefix(defect?.salvaged ?? new Uint8Array(1), text), `cut ${cut}: salvage is a prefix`).toBe(true)
    if ((defect?.salvaged.length ?? 0) > 0) salvagedCuts++
  }
  return salvagedCuts
}

describe('gzip frames', () => {
  const members = TEXTS.map((text) => encodeGzipFrame(text))
  const file = concat(members)

  it('computes the gzip CRC-32', () => {
    expect(crc32(encoder.encode('123456789'))).toBe(0xcbf43926)
    expect(crc32(new Uint8Array(0))).toBe(0)
  })

  it('writes each batch as one member with mtime 0 and no name', () => {
    for (const member of members) {
      expect([...member.subarray(0, 3)]).toEqual([0x1f, 0x8b, 0x08])
      expect(member[3]).toBe(0)
      expect([...member.subarray(4, 8)]).toEqual([0, 0, 0, 0])
    }
  })

  it('decodes a multi-member file member by member', () => {
    const walk = decodeGzipMembers(file)
    expect(walk.defect).toBeUndefined()
    expect(walk.frames.map((frame) => [frame.offset, frame.length])).toEqual([
      [0, members[0]?.length],
      [members[0]?.length, members[1]?.length],
      [(members[0]?.length ?? 0) + (members[1]?.length ?? 0), members[2]?.length],
    ])
    walk.frames.forEach((frame, index) => {
      expect(Buffer.from(frame.decoded).equals(Buffer.from(TEXTS[index] ?? new Uint8Array(0)))).toBe(true)
    })
    expect(decodeGzipMembers(new Uint8Array(0))).toEqual({ frames: [] })
  })

  it.skipIf(!commandExists('gunzip'))('prints the JSONL text with gunzip -c', () => {
    const result = spawnSync('gunzip', ['-c'], { input: file })
    expect(result.status).toBe(0)
    expect(Buffer.from(result.stdout).equals(Buffer.from(concat(TEXTS)))).toBe(true)
  })

  it('decodes members larger than one decoder push, across push boundaries', () => {
    const texts = [randomText(150_000, 1), jsonLines(2_000, 0), randomText(70_000, 2)].map((text) =>
      encoder.encode(text),
    )
    const parts = texts.map((text) => encodeGzipFrame(text))
    const walk = decodeGzipMembers(concat(parts))
    expect(walk.defect).toBeUndefined()
    expect(walk.frames.map((frame) => frame.length)).toEqual(parts.map((part) => part.length))
    walk.frames.forEach((frame, index) => {
      expect(Buffer.from(frame.decoded).equals(Buffer.from(texts[index] ?? new Uint8Array(0)))).toBe(true)
    })
    const big = concat(parts.slice(0, 2))
    const cut = decodeGzipMembers(big.subarray(0, (parts[0]?.length ?? 0) + 20_000))
    expect(cut.frames).toHaveLength(1)
    expect(cut.defect?.reason).toBe('incomplete')
    expect(cut.defect?.salvaged.length).toBeGreaterThan(0)
    expect(isPrefix(cut.defect?.salvaged ?? new Uint8Array(1), texts[1] ?? new Uint8Array(0))).toBe(true)
  })

  it('reports a CRC or size mismatch as a frame defect, with the later member', () => {
    const second = members[0]?.length ?? 0
    const third = second + (members[1]?.length ?? 0)
    for (const trailerByte of [8, 4, 1]) {
      const damaged = file.slice()
      damaged[third - trailerByte] = (damaged[third - trailerByte] ?? 0) ^ 0x01
      const walk = decodeGzipMembers(damaged)
      expect(walk.frames).toHaveLength(1)
      expect(walk.defect).toEqual({
        kind: 'frame',
        reason: 'checksum',
        offset: second,
        salvaged: new Uint8Array(0),
        laterDecodableFrameOffsets: [third],
      })
    }
  })

  it('reports damaged deflate data as a frame defect', () => {
    const second = members[0]?.length ?? 0
    const third = second + (members[1]?.length ?? 0)
    for (let at = second + 10; at < third - 8; at += 3) {
      const damaged = file.slice()
      damaged[at] = (damaged[at] ?? 0) ^ 0x5a
      const walk = decodeGzipMembers(damaged)
      expect(walk.frames.length).toBeGreaterThanOrEqual(1)
      if (walk.frames.length === 3) {
        // A flip that leaves the stream decodable with an equal CRC never happens for one byte.
        throw new Error(`damage at ${at} went unnoticed`)
      }
      expect(walk.defect?.offset).toBe(second)
      expect(['undecodable', 'checksum', 'incomplete']).toContain(walk.defect?.reason)
      expect(walk.defect?.laterDecodableFrameOffsets).toContain(third)
    }
  })

  it('returns the complete members before a cut at every byte offset, the cut one as a salvaged prefix', () => {
    const salvaged = checkEveryCut(file, members, TEXTS, decodeGzipMembers)
    expect(salvaged).toBeGreaterThan(0)
  })

  it('stops at bytes without gzip magic and finds a later member', () => {
    const junkAt = (members[0]?.length ?? 0) + (members[1]?.length ?? 0)
    for (const junk of [
      [0x0a],
      [0x1f],
      [0x1f, 0x8b],
      [0x1f, 0x8b, 0x08, 0x00, 0x00],
      [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ]) {
      const walk = decodeGzipMembers(
        concat([members[0] ?? new Uint8Array(0), members[1] ?? new Uint8Array(0), Uint8Array.from(junk)]),
      )
      expect(walk.frames).toHaveLength(2)
      expect(walk.defect?.offset).toBe(junkAt)
      expect(walk.defect?.reason).toBe(junk[0] === 0x1f ? 'incomplete' : 'bad-magic')
      expect(walk.defect?.salvaged).toEqual(new Uint8Array(0))
    }
    const garbage = encoder.encode(randomText(100, 3))
    const withLater = concat([
      members[0] ?? new Uint8Array(0),
      garbage,
      members[1] ?? new Uint8Array(0),
      members[2] ?? new Uint8Array(0),
    ])
    const walk = decodeGzipMembers(withLater)
    expect(walk.frames).toHaveLength(1)
    expect(walk.defect?.reason).toBe('bad-magic')
    expect(walk.defect?.offset).toBe(members[0]?.length)
    const later = (members[0]?.length ?? 0) + garbage.length
    expect(walk.defect?.laterDecodableFrameOffsets).toEqual([later, later + (members[1]?.length ?? 0)])
    expect(decodeGzipMembers(withLater.subarray(later)).frames.map((frame) => frame.length)).toEqual([
      members[1]?.length,
      members[2]?.length,
    ])
  })

  it('lists a torn member after a bad region as decodable when its prefix decodes', () => {
    const third = members[2] ?? new Uint8Array(0)
    const torn = concat([members[0] ?? new Uint8Array(0), encoder.encode('xxxx'), third.subarray(0, third.length - 20)])
    const walk = decodeGzipMembers(torn)
    expect(walk.defect?.reason).toBe('bad-magic')
    expect(walk.defect?.laterDecodableFrameOffsets).toEqual([(members[0]?.length ?? 0) + 4])
  })

  it('gzipCodec encodes and walks', () => {
    const codec = gzipCodec()
    expect(codec.extension).toBe('.jsonl.gz')
    const frame = codec.encode(TEXTS[1] ?? new Uint8Array(0))
    expect(frame).toBeInstanceOf(Uint8Array)
    expect(codec.walk(frame as Uint8Array).frames[0]?.decoded).toEqual(TEXTS[1])
  })
})

describe('zstd frames', () => {
  const wasmEncoder: HostZstdEncoder = (bytes, level) => wasmZstd.compress(bytes, level)
  let frames: Uint8Array[] = []
  let file: Uint8Array = new Uint8Array(0)

  beforeAll(async () => {
    await wasmZstd.isLoaded
    frames = TEXTS.map((text) => new Uint8Array(wasmZstd.compress(text, 3)))
    file = concat(frames)
  })

  it('locates frame boundaries by structure and decodes each frame', () => {
    let offset = 0
    for (const frame of frames) {
      const layout = readZstdFrameLayout(file, offset)
      expect(layout.kind).toBe('frame')
      if (layout.kind === 'frame') expect(layout.length).toBe(frame.length)
      offset += frame.length
    }
    const walk = decodeZstdFrames(file)
    expect(walk.defect).toBeUndefined()
    expect(walk.frames.map((frame) => frame.length)).toEqual(frames.map((frame) => frame.length))
    walk.frames.forEach((frame, index) => {
      expect(Buffer.from(frame.decoded).equals(Buffer.from(TEXTS[index] ?? new Uint8Array(0)))).toBe(true)
    })
    expect(decodeZstdFrames(new Uint8Array(0))).toEqual({ frames: [] })
  })

  it('walks multi-block frames block by block', () => {
    const text = encoder.encode(randomText(300_000, 11))
    const frame = new Uint8Array(wasmZstd.compress(text, 3))
    const layout = readZstdFrameLayout(frame, 0)
    expect(layout.kind).toBe('frame')
    if (layout.kind !== 'frame') return
    expect(layout.length).toBe(frame.length)
    expect(layout.blockEnds.length).toBeGreaterThanOrEqual(3)
    expect(layout.blockEnds.at(-1)).toBe(frame.length)
    expect(Buffer.from(decodeZstdFrames(frame).frames[0]?.decoded ?? []).equals(Buffer.from(text))).toBe(true)
  })

  it.skipIf(!commandExists('zstd'))('walks zstd CLI frames with a content checksum; zstd -dc prints the text', () => {
    const parts = TEXTS.map(
      (text) => new Uint8Array(spawnSync('zstd', ['-3', '--check', '-c', '-q'], { input: text }).stdout),
    )
    const cliFile = concat(parts)
    const layout = readZstdFrameLayout(cliFile, 0)
    expect(layout.kind === 'frame' && layout.checksum).toBe(true)
    const walk = decodeZstdFrames(cliFile)
    expect(walk.defect).toBeUndefined()
    expect(walk.frames.map((frame) => frame.length)).toEqual(parts.map((part) => part.length))
    const printed = spawnSync('zstd', ['-dc', '-q'], { input: file })
    expect(printed.status).toBe(0)
    expect(Buffer.from(printed.stdout).equals(Buffer.from(concat(TEXTS)))).toBe(true)
  })

  it('ignores skippable frames', () => {
    const skippable = Uint8Array.of(0x53, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9)
    const walk = decodeZstdFrames(concat([frames[0] ?? new Uint8Array(0), skippable, frames[1] ?? new Uint8Array(0)]))
    expect(walk.defect).toBeUndefined()
    expect(walk.frames.map((frame) => frame.offset)).toEqual([0, (frames[0]?.length ?? 0) + skippable.length])
    expect(walk.frames[1]?.decoded).toEqual(TEXTS[1])
  })

  it('returns the complete frames before a cut at every byte offset, the cut one as a salvaged prefix', () => {
    // A hand-built multi-block frame (raw, RLE, raw blocks) so that cuts inside a frame salvage blocks.
    const first = encoder.encode(`${jsonLines(1, 15)}`)
    const last = encoder.encode('{"tail":true}\n')
    const blockHeader = (size: number, type: number, isLast: boolean) => {
      const value = (size << 3) | (type << 1) | (isLast ? 1 : 0)
      return Uint8Array.of(value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff)
    }
    const contentSize = first.length + 20 + last.length
    const handFrame = concat([
      Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x20, contentSize),
      blockHeader(first.length, 0, false),
      first,
      blockHeader(20, 1, false),
      encoder.encode(' '),
      blockHeader(last.length, 0, true),
      last,
    ])
    const handText = concat([first, encoder.encode(' '.repeat(20)), last])
    expect(decodeZstdFrames(handFrame).frames[0]?.decoded).toEqual(handText)
    const parts = [...frames, handFrame]
    const salvaged = checkEveryCut(concat(parts), parts, [...TEXTS, handText], decodeZstdFrames)
    expect(salvaged).toBeGreaterThan(0)
  })

  it('salvages the complete blocks of a large torn frame as a prefix', () => {
    const text = encoder.encode(randomText(300_000, 5))
    const big = new Uint8Array(wasmZstd.compress(text, 3))
    const layout = readZstdFrameLayout(big, 0)
    if (layout.kind !== 'frame') throw new Error('expected a frame')
    const firstBlockEnd = layout.blockEnds[0] ?? 0
    const torn = concat([
      frames[0] ?? new Uint8Array(0),
      frames[1] ?? new Uint8Array(0),
      big.subarray(0, firstBlockEnd + 10),
    ])
    const walk = decodeZstdFrames(torn)
    expect(walk.frames).toHaveLength(2)
    expect(walk.defect?.reason).toBe('incomplete')
    expect(walk.defect?.offset).toBe((frames[0]?.length ?? 0) + (frames[1]?.length ?? 0))
    expect(walk.defect?.salvaged.length).toBe(131_072)
    expect(isPrefix(walk.defect?.salvaged ?? new Uint8Array(1), text)).toBe(true)
  })

  it('stops at bad magic or an invalid block and finds later frames', () => {
    const first = frames[0] ?? new Uint8Array(0)
    const garbage = encoder.encode('not a frame at all')
    const withLater = concat([first, garbage, frames[1] ?? new Uint8Array(0), frames[2] ?? new Uint8Array(0)])
    const walk = decodeZstdFrames(withLater)
    expect(walk.frames).toHaveLength(1)
    expect(walk.defect?.reason).toBe('bad-magic')
    expect(walk.defect?.offset).toBe(first.length)
    const later = first.length + garbage.length
    expect(walk.defect?.laterDecodableFrameOffsets).toEqual([later, later + (frames[1]?.length ?? 0)])

    const second = frames[1]?.slice() ?? new Uint8Array(0)
    const secondLayout = readZstdFrameLayout(second, 0)
    if (secondLayout.kind !== 'frame') throw new Error('expected a frame')
    second[secondLayout.headerLength] = (second[secondLayout.headerLength] ?? 0) | 0x06
    const invalid = decodeZstdFrames(concat([first, second, frames[2] ?? new Uint8Array(0)]))
    expect(invalid.frames).toHaveLength(1)
    expect(invalid.defect?.reason).toBe('undecodable')
    expect(invalid.defect?.laterDecodableFrameOffsets).toEqual([first.length + second.length])
  })

  it('accepts a host encoder that passes the probe', () => {
    const zstd = createZstdEncoder({ zstdEncoder: wasmEncoder })
    expect(zstd.source).toBe(zstdAvailable() ? 'node:zlib' : 'zstdEncoder')
    const frame = zstd.encode(TEXTS[1] ?? new Uint8Array(0))
    expect(frame).toBeInstanceOf(Uint8Array)
    expect(decodeZstdFrames(frame as Uint8Array).frames[0]?.decoded).toEqual(TEXTS[1])
  })

  it('rejects host encoders that fail the probe with ZSTD_UNAVAILABLE', () => {
    const garbage: HostZstdEncoder = (bytes) => bytes.map((byte) => byte ^ 0x55)
    const wrongText: HostZstdEncoder = (bytes, level) => wasmZstd.compress(bytes.subarray(1), level)
    const throws: HostZstdEncoder = () => {
      throw new Error('no wasm here')
    }
    const twoFrames: HostZstdEncoder = (bytes, level) =>
      concat([wasmZstd.compress(bytes, level), wasmZstd.compress(bytes, level)])
    for (const [zstdEncoder, reason] of [
      [garbage, /not a zstd frame/],
      [wrongText, /different bytes/],
      [throws, /no wasm here/],
      [twoFrames, /after the frame/],
    ] as const) {
      let caught: unknown
      try {
        createZstdEncoder({ zstdEncoder })
      } catch (error) {
        caught = error
      }
      expect(ConfigError.is(caught)).toBe(true)
      const error = caught as ConfigError
      expect(error.code).toBe(ErrorCode.ZSTD_UNAVAILABLE)
      expect(error.option).toBe('zstdEncoder')
      expect(error.reason).toMatch(reason)
      if (zstdEncoder === throws) expect(error.cause).toBeInstanceOf(Error)
    }
  })

  it.skipIf(zstdAvailable())('throws ZSTD_UNAVAILABLE without node:zlib zstd or an encoder (Node 20)', () => {
    let caught: unknown
    try {
      createZstdEncoder({})
    } catch (error) {
      caught = error
    }
    expect(ConfigError.is(caught)).toBe(true)
    const error = caught as ConfigError
    expect(error.code).toBe(ErrorCode.ZSTD_UNAVAILABLE)
    expect(error.option).toBe('compression')
    expect(error.reason).toMatch(/zstdEncoder/)
    expect(error.reason).toMatch(/'gzip'/)
    expect(error.reason).toMatch(/22\.15/)
    expect(() => zstdCodec()).toThrow(ConfigError)
  })

  it('zstdCodec reads without an encoder when writes are deferred', () => {
    const codec = zstdCodec({ onUnavailable: 'reject-writes' })
    expect(codec.extension).toBe('.jsonl.zst')
    expect(codec.walk(file).frames).toHaveLength(3)
    if (zstdAvailable()) {
      expect(codec.unavailable).toBeUndefined()
    } else {
      expect(codec.unavailable?.code).toBe(ErrorCode.ZSTD_UNAVAILABLE)
      expect(() => codec.encode(TEXTS[0] ?? new Uint8Array(0))).toThrow(codec.unavailable)
    }
    const writing = zstdCodec({ zstdEncoder: wasmEncoder })
    expect(writing.unavailable).toBeUndefined()
    const frame = writing.encode(TEXTS[2] ?? new Uint8Array(0))
    expect(writing.walk(frame as Uint8Array).frames[0]?.decoded).toEqual(TEXTS[2])
  })
})
