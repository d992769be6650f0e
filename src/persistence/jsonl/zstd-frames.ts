import * as zlib from 'node:zlib'
import { Decompress, decompress } from 'fzstd'
import { ErrorCode } from '../../errors/codes.js'
import { ConfigError } from '../../errors/config-error.js'
import { concatBytes } from './concat-bytes.js'
import type { DecodedFrame, FrameDefectReason, FrameWalk } from './frame-walk.js'
import { zstdContentChecksum } from './xxhash64.js'
import { zstdWeightsRunAway } from './zstd-weights-guard.js'

/**
 * A zstd compressor the host passes (`jsonlPersistence({ zstdEncoder })`): any wasm or native
 * library; it must return one complete zstd frame of `bytes`.
 */
export type HostZstdEncoder = (bytes: Uint8Array, level: number) => Uint8Array

/** Options of {@link createZstdEncoder}. */
export interface ZstdEncoderOptions {
  /** Used where `node:zlib` has no zstd (before Node 22.15), after a probe round trip. */
  readonly zstdEncoder?: HostZstdEncoder
}

/** Writes batches as zstd frames (content checksum on where the encoder allows it, level 3). */
export interface ZstdFrameEncoder {
  /** Which encoder writes: `node:zlib` where the runtime has zstd, else the host's. */
  readonly source: 'node:zlib' | 'zstdEncoder'
  /**
   * Compresses one batch into one zstd frame.
   *
   * @param text - the batch's JSONL text
   * @returns the frame (a promise for batches over 1 MiB written with `node:zlib`)
   */
  encode(text: Uint8Array): Uint8Array | Promise<Uint8Array>
}

/** The zstd level every frame is written at. */
export const ZSTD_LEVEL = 3
/** Batches above this size use `node:zlib`'s asynchronous zstd, so they do not block the event loop. */
export const ZSTD_ASYNC_BYTES = 1_048_576

const ZSTD_MAGIC = 0xfd2fb528
const SKIPPABLE_MAGIC = 0x184d2a50
const BLOCK_MAXIMUM_SIZE = 131_072

/** A zstd frame located by its structure, without decompressing. */
export type ZstdFrameLayout =
  | {
      /** A zstd frame, complete within the file. */
      readonly kind: 'frame'
      /** Its length in bytes, checksum included. */
      readonly length: number
      /** The frame header's length (magic to content size): where the first block header starts. */
      readonly headerLength: number
      /** The end of each block, relative to the frame start. */
      readonly blockEnds: readonly number[]
      /** Whether it carries a 4-byte content checksum. */
      readonly checksum: boolean
    }
  | {
      /** A skippable frame (magic `0x184D2A5?`), complete within the file; ignored. */
      readonly kind: 'skippable'
      /** Its length in bytes. */
      readonly length: number
    }
  | {
      /** A frame (or a prefix of one) that runs past the end of the file. */
      readonly kind: 'incomplete'
    }
  | {
      /** No frame magic, a reserved header bit or block type, a block over 128 KiB, a dictionary. */
      readonly kind: 'invalid'
      /** `bad-magic` when no frame magic starts here. */
      readonly reason: 'bad-magic' | 'undecodable'
    }

/**
 * Walks the structure of the frame at `offset`: magic, frame header descriptor, window
 * descriptor, dictionary id, content size, then 3-byte block headers (an RLE block carries one
 * byte) up to the last block, then the optional checksum.
 *
 * @param file - the stored bytes
 * @param offset - where a frame must start
 * @returns where the frame ends, or why it cannot be read
 */
export function readZstdFrameLayout(file: Uint8Array, offset: number): ZstdFrameLayout {
  const available = file.length - offset
  if (available < 4)
    return magicPrefix(file, offset) ? { kind: 'incomplete' } : { kind: 'invalid', reason: 'bad-magic' }
  const magic = readUint32(file, offset)
  if ((magic & 0xfffffff0) >>> 0 === SKIPPABLE_MAGIC) {
    if (available < 8) return { kind: 'incomplete' }
    const length = 8 + readUint32(file, offset + 4)
    return length > available ? { kind: 'incomplete' } : { kind: 'skippable', length }
  }
  if (magic !== ZSTD_MAGIC) return { kind: 'invalid', reason: 'bad-magic' }
  const descriptor = file[offset + 4]
  if (descriptor === undefined) return { kind: 'incomplete' }
  const contentSizeFlag = descriptor >> 6
  const singleSegment = (descriptor >> 5) & 1
  const checksum = ((descriptor >> 2) & 1) === 1
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] ?? 0
  if (descriptor & 0x08) return { kind: 'invalid', reason: 'undecodable' }
  const dictionaryAt = offset + 5 + (singleSegment ? 0 : 1)
  const contentSizeBytes = contentSizeFlag === 0 ? singleSegment : 1 << contentSizeFlag
  let at = dictionaryAt + dictionaryBytes + contentSizeBytes
  if (at > file.length) return { kind: 'incomplete' }
  for (let index = 0; index < dictionaryBytes; index++) {
    if (file[dictionaryAt + index] !== 0) return { kind: 'invalid', reason: 'undecodable' }
  }
  const headerLength = at - offset
  const blockEnds: number[] = []
  for (;;) {
    if (at + 3 > file.length) return { kind: 'incomplete' }
    const header = (file[at] ?? 0) | ((file[at + 1] ?? 0) << 8) | ((file[at + 2] ?? 0) << 16)
    const type = (header >> 1) & 3
    const size = header >>> 3
    if (type === 3 || size > BLOCK_MAXIMUM_SIZE) return { kind: 'invalid', reason: 'undecodable' }
    at += 3 + (type === 1 ? 1 : size)
    if (at > file.length) return { kind: 'incomplete' }
    blockEnds.push(at - offset)
    if (header & 1) break
  }
  if (checksum) at += 4
  if (at > file.length) return { kind: 'incomplete' }
  return { kind: 'frame', length: at - offset, headerLength, blockEnds, checksum }
}

/**
 * Reads a zstd log: frames are located by {@link readZstdFrameLayout}, each complete frame is
 * decoded with fzstd's `decompress` and its content checksum, when it has one, checked here (fzstd
 * skips it): a mismatch is a `checksum` defect. Skippable frames are ignored. Stops at the first defective frame; an incomplete last frame is salvaged with fzstd's
 * streaming `Decompress` (its complete blocks; decoder errors → nothing). Then lists the later
 * offsets where zstd magic starts a decodable frame (any of them makes the damage corruption rather
 * than a torn tail).
 *
 * @param file - the stored bytes
 * @returns the complete frames and the first defect, if any
 */
export function decodeZstdFrames(file: Uint8Array): FrameWalk {
  const frames: DecodedFrame[] = []
  let offset = 0
  while (offset < file.length) {
    const frame = decodeFrame(file, offset)
    if (frame.kind === 'skippable') {
      offset += frame.length
    } else if (frame.kind === 'complete') {
      frames.push({ offset, length: frame.length, decoded: frame.decoded })
      offset += frame.length
    } else {
      const salvaged = frame.kind === 'incomplete' ? frame.salvaged : new Uint8Array(0)
      const laterDecodableFrameOffsets = findLaterFrames(file, offset + 1)
      return { frames, defect: { kind: 'frame', reason: frame.kind, offset, salvaged, laterDecodableFrameOffsets } }
    }
  }
  return { frames }
}

/**
 * Whether `node:zlib` can write zstd (Node >= 22.15).
 *
 * @returns `true` when `zlib.zstdCompressSync` exists
 */
export function zstdAvailable(): boolean {
  return nativeZstd() !== undefined
}

/**
 * The zstd writer: `node:zlib` where the runtime has zstd (level 3, content checksum on; its async
 * API above 1 MiB), else the host's `zstdEncoder`, whose frames gain a content checksum when they
 * lack one (see {@link withContentChecksum}). A host encoder is accepted only after a round
 * trip of a small probe through it and fzstd (it is probed even where `node:zlib` writes, so a
 * broken option never passes silently).
 *
 * @param options - the host encoder, if any
 * @returns the encoder
 * @throws ConfigError `ZSTD_UNAVAILABLE` (`option: 'zstdEncoder'`) naming the probe's failure;
 *   (`option: 'compression'`) when there is neither encoder
 */
export function createZstdEncoder(options: ZstdEncoderOptions = {}): ZstdFrameEncoder {
  const host = options.zstdEncoder
  if (host !== undefined) probeHostEncoder(host)
  const native = nativeZstd()
  if (native !== undefined) return { source: 'node:zlib', encode: (text) => native.encode(text) }
  if (host !== undefined)
    return { source: 'zstdEncoder', encode: (text) => withContentChecksum(callHost(host, text), text) }
  throw new ConfigError({
    option: 'compression',
    value: 'zstd',
    code: ErrorCode.ZSTD_UNAVAILABLE,
    reason:
      `this runtime's node:zlib has no zstd compression (Node ${process.versions.node}; it needs >= 22.15): ` +
      "pass a zstdEncoder (bytes, level) => Uint8Array, pick compression 'gzip', or run Node >= 22.15",
  })
}

type FrameResult =
  | { readonly kind: 'complete'; readonly length: number; readonly decoded: Uint8Array }
  | { readonly kind: 'skippable'; readonly length: number }
  | { readonly kind: 'incomplete'; readonly salvaged: Uint8Array }
  | { readonly kind: Exclude<FrameDefectReason, 'incomplete'> }

function decodeFrame(file: Uint8Array, offset: number): FrameResult {
  const layout = readZstdFrameLayout(file, offset)
  switch (layout.kind) {
    case 'skippable':
      return layout
    case 'invalid':
      return { kind: layout.reason }
    case 'incomplete':
      return { kind: 'incomplete', salvaged: salvageFrame(file.subarray(offset)) }
    case 'frame':
      // fzstd never returns from some damaged weight tables: such a frame is undecodable.
      if (zstdWeightsRunAway(file.subarray(offset, offset + layout.length))) return { kind: 'undecodable' }
      try {
        const decoded = decompress(file.subarray(offset, offset + layout.length))
        if (layout.checksum && readUint32(file, offset + layout.length - 4) !== zstdContentChecksum(decoded))
          return { kind: 'checksum' }
        return { kind: 'complete', length: layout.length, decoded }
      } catch {
        return { kind: 'undecodable' }
      }
  }
}

/** The complete blocks of an incomplete frame, decoded in streaming mode; nothing on an error. */
function salvageFrame(bytes: Uint8Array): Uint8Array {
  if (zstdWeightsRunAway(bytes)) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  const decoder = new Decompress((data) => {
    if (data.length > 0) chunks.push(data)
  })
  try {
    decoder.push(bytes, false)
  } catch {
    return new Uint8Array(0)
  }
  return concatBytes(chunks)
}

/**
 * Offsets from `from` on where zstd magic starts a frame that decodes (completely, or as a
 * non-empty streaming prefix at the end of the file).
 *
 * @param file - the stored bytes
 * @param from - the first offset to look at
 * @returns the offsets, in file order
 * @internal
 */
export function findLaterFrames(file: Uint8Array, from: number): number[] {
  const offsets: number[] = []
  for (let at = from; at + 4 <= file.length; at++) {
    if (file[at] !== 0x28 || readUint32(file, at) !== ZSTD_MAGIC) continue
    const frame = decodeFrame(file, at)
    if (frame.kind === 'complete') {
      offsets.push(at)
      at += frame.length - 1
    } else if (frame.kind === 'incomplete' && frame.salvaged.length > 0) {
      offsets.push(at)
    }
  }
  return offsets
}

function magicPrefix(file: Uint8Array, offset: number): boolean {
  const zstd = [0x28, 0xb5, 0x2f, 0xfd]
  const skippable = [0x50, 0x2a, 0x4d, 0x18]
  let zstdMatch = true
  let skippableMatch = true
  for (let index = 0; offset + index < file.length; index++) {
    const byte = file[offset + index] ?? 0
    if (byte !== zstd[index]) zstdMatch = false
    if (index === 0 ? (byte & 0xf0) !== 0x50 : byte !== skippable[index]) skippableMatch = false
  }
  return zstdMatch || skippableMatch
}

function readUint32(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) | ((bytes[at + 2] ?? 0) << 16) | ((bytes[at + 3] ?? 0) << 24)) >>> 0
  )
}

/** The zstd of `node:zlib`, absent from Node 20's types, so it is looked up at run time. */
interface ZlibZstd {
  readonly zstdCompressSync: (bytes: Uint8Array, options: { params: Record<number, number> }) => Uint8Array
  readonly zstdCompress: (
    bytes: Uint8Array,
    options: { params: Record<number, number> },
    callback: (error: Error | null, result: Uint8Array) => void,
  ) => void
}

function nativeZstd(): { encode(text: Uint8Array): Uint8Array | Promise<Uint8Array> } | undefined {
  const module = zlib as unknown as Partial<Record<keyof ZlibZstd, unknown>>
  const constants = zlib.constants as unknown as Record<string, unknown>
  const level = constants['ZSTD_c_compressionLevel']
  const checksumFlag = constants['ZSTD_c_checksumFlag']
  if (typeof module.zstdCompressSync !== 'function' || typeof level !== 'number' || typeof checksumFlag !== 'number') {
    return undefined
  }
  const zstd = module as unknown as ZlibZstd
  const options = { params: { [level]: ZSTD_LEVEL, [checksumFlag]: 1 } }
  return {
    encode(text) {
      if (text.length <= ZSTD_ASYNC_BYTES || typeof zstd.zstdCompress !== 'function')
        return zstd.zstdCompressSync(text, options)
      return new Promise((resolve, reject) => {
        zstd.zstdCompress(text, options, (error, result) => (error ? reject(error) : resolve(result)))
      })
    },
  }
}

/**
 * Adds the content checksum to a frame written without one: sets the checksum flag of the frame
 * header descriptor and appends the low 32 bits of XXH64 of `text`, which is all that flag changes
 * in a frame. Every stored frame then carries one, so a damaged frame that still decodes is found.
 *
 * @param frame - one complete zstd frame of `text`
 * @param text - the frame's content
 * @returns the frame with a checksum (the same bytes when it had one, or is not a plain frame)
 * @internal
 */
export function withContentChecksum(frame: Uint8Array, text: Uint8Array): Uint8Array {
  const layout = readZstdFrameLayout(frame, 0)
  if (layout.kind !== 'frame' || layout.checksum || layout.length !== frame.length) return frame
  const checked = new Uint8Array(frame.length + 4)
  checked.set(frame)
  checked[4] = (checked[4] ?? 0) | 0x04
  const checksum = zstdContentChecksum(text)
  checked[frame.length] = checksum & 0xff
  checked[frame.length + 1] = (checksum >>> 8) & 0xff
  checked[frame.length + 2] = (checksum >>> 16) & 0xff
  checked[frame.length + 3] = checksum >>> 24
  return checked
}

function callHost(host: HostZstdEncoder, text: Uint8Array): Uint8Array {
  const frame: unknown = host(text, ZSTD_LEVEL)
  if (!(frame instanceof Uint8Array)) {
    throw new ConfigError({
      option: 'zstdEncoder',
      value: host,
      code: ErrorCode.ZSTD_UNAVAILABLE,
      reason: `the encoder returned ${describe(frame)}, not a Uint8Array`,
    })
  }
  return frame
}

/** A few lines of JSONL with repeats, so the probe frame holds compressed blocks with matches. */
function probeText(): Uint8Array {
  const lines: string[] = []
  for (let index = 0; index < 40; index++) {
    const text = index % 3 === 0 ? 'yoke zstd probe ü😀 ' : `line ${index * 7919} of the probe `
    lines.push(
      JSON.stringify({
        type: 'probe/line',
        seq: index,
        time: 1_700_000_000_000 + index,
        data: { text: text.repeat(1 + (index % 5)) },
      }),
    )
  }
  return new TextEncoder().encode(`${lines.join('\n')}\n`)
}

function probeHostEncoder(host: HostZstdEncoder): void {
  const failure = probeFailure(host)
  if (failure === undefined) return
  throw new ConfigError({
    option: 'zstdEncoder',
    value: host,
    code: ErrorCode.ZSTD_UNAVAILABLE,
    reason: `the zstdEncoder failed its probe round trip through fzstd: ${failure.reason}`,
    ...(failure.cause === undefined ? {} : { cause: failure.cause }),
  })
}

/** Why `host` fails the probe round trip, or `undefined` when fzstd reads its frame back exactly. */
function probeFailure(host: HostZstdEncoder): { readonly reason: string; readonly cause?: unknown } | undefined {
  if (typeof host !== 'function') return { reason: `it is ${describe(host)}, not a function` }
  const probe = probeText()
  let frame: unknown
  try {
    frame = host(probe, ZSTD_LEVEL)
  } catch (error) {
    return { reason: `it threw: ${messageOf(error)}`, cause: error }
  }
  if (!(frame instanceof Uint8Array)) return { reason: `it returned ${describe(frame)}, not a Uint8Array` }
  const layout = readZstdFrameLayout(frame, 0)
  if (layout.kind !== 'frame') return { reason: `its output is not a zstd frame (${layout.kind})` }
  if (layout.length !== frame.length)
    return { reason: `its output has ${frame.length - layout.length} bytes after the frame` }
  let decoded: Uint8Array
  try {
    decoded = decompress(frame)
  } catch (error) {
    return { reason: `fzstd cannot read its frame: ${messageOf(error)}`, cause: error }
  }
  if (decoded.length !== probe.length || decoded.some((byte, index) => byte !== probe[index])) {
    return { reason: `fzstd reads its frame as different bytes (${decoded.length} decoded, ${probe.length} encoded)` }
  }
  return undefined
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value !== 'object') return typeof value
  return value.constructor?.name ?? 'an object'
}
