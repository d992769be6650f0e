import { decodeGzipMembers, encodeGzipFrame, findLaterMembers } from './gzip-frames.js'
import { createZstdEncoder, decodeZstdFrames, findLaterFrames, type ZstdEncoderOptions } from './zstd-frames.js'
import { ErrorCode } from '../../errors/codes.js'
import { ConfigError } from '../../errors/config-error.js'
import type { FrameWalk } from './frame-walk.js'

/**
 * A compressed-log codec: how one batch becomes one independent frame, and how a file of frames is
 * read back. Independent of the JSONL line scanner, which runs over each frame's decoded text.
 */
export interface FrameCodec {
  /** The file suffix of logs written with this codec. */
  readonly extension: '.jsonl.gz' | '.jsonl.zst'
  /**
   * Compresses one batch's JSONL text into one independent frame.
   *
   * @param text - the batch's lines, concatenated
   * @returns the frame bytes (a promise for large zstd batches written with `node:zlib`)
   * @throws ConfigError `ZSTD_UNAVAILABLE` when a zstd codec has no usable encoder
   */
  encode(text: Uint8Array): Uint8Array | Promise<Uint8Array>
  /**
   * Reads a whole file of frames.
   *
   * @param file - the stored bytes
   * @returns the complete frames and the first defect, if any
   */
  walk(file: Uint8Array): FrameWalk
  /**
   * Finds frames that start after `from` and decode, wherever they are: inside the bytes a damaged
   * frame swallowed (a flipped block size can make one frame run over the later ones) or after it.
   *
   * @param file - the stored bytes
   * @param from - the first offset to look at
   * @returns the offsets where a decodable frame starts
   */
  findLater(file: Uint8Array, from: number): number[]
}

/** The zstd codec: a {@link FrameCodec} that may lack an encoder. */
export interface ZstdFrameCodec extends FrameCodec {
  readonly extension: '.jsonl.zst'
  /**
   * Why this codec cannot write (`ConfigError ZSTD_UNAVAILABLE`), or `undefined` when it can.
   * Only set with `onUnavailable: 'reject-writes'`; {@link FrameCodec.encode} throws it.
   */
  readonly unavailable: ConfigError | undefined
}

/** Options of {@link zstdCodec}. */
export interface ZstdCodecOptions extends ZstdEncoderOptions {
  /**
   * What a missing or failing encoder does: `throw` (default) → `zstdCodec` throws `ConfigError
   * ZSTD_UNAVAILABLE` at construction (`compression: 'zstd'`);
   * `reject-writes` → the codec still reads `.jsonl.zst` files and `encode` throws that error
   * (existing files stay loadable on Node 20, where `node:zlib` has no zstd).
   */
  readonly onUnavailable?: 'throw' | 'reject-writes'
}

/**
 * The gzip codec: fflate level 6, mtime 0, no name; one gzip member per batch.
 *
 * @returns the codec
 */
export function gzipCodec(): FrameCodec {
  return { extension: '.jsonl.gz', encode: encodeGzipFrame, walk: decodeGzipMembers, findLater: findLaterMembers }
}

/**
 * The zstd codec: frames read with fzstd, written with `node:zlib` zstd or the host's
 * `zstdEncoder`.
 *
 * @param options - the host encoder and what a missing encoder does
 * @returns the codec
 * @throws ConfigError `ZSTD_UNAVAILABLE` without a usable encoder, unless `onUnavailable` is
 *   `reject-writes`
 */
export function zstdCodec(options: ZstdCodecOptions = {}): ZstdFrameCodec {
  let encode: (text: Uint8Array) => Uint8Array | Promise<Uint8Array>
  let unavailable: ConfigError | undefined
  try {
    const encoder = createZstdEncoder(options)
    encode = (text) => encoder.encode(text)
  } catch (error) {
    if (options.onUnavailable !== 'reject-writes' || !isZstdUnavailable(error)) throw error
    unavailable = error
    encode = () => {
      throw error
    }
  }
  return { extension: '.jsonl.zst', encode, walk: decodeZstdFrames, findLater: findLaterFrames, unavailable }
}

function isZstdUnavailable(error: unknown): error is ConfigError {
  return ConfigError.is(error) && error.code === ErrorCode.ZSTD_UNAVAILABLE
}
