/** One complete, decoded frame of a compressed log: each batch is one independent frame. */
export interface DecodedFrame {
  /** The file byte where the frame starts. */
  readonly offset: number
  /** The frame's length in file bytes. */
  readonly length: number
  /** The JSONL text bytes the frame decodes to. */
  readonly decoded: Uint8Array
}

/** Why a frame is a defect (the tail defect `frame`). */
export type FrameDefectReason =
  /** The frame runs past the end of the file (a torn append). */
  | 'incomplete'
  /** No frame magic where a frame must start. */
  | 'bad-magic'
  /** The frame is complete (or its structure is invalid) but does not decode. */
  | 'undecodable'
  /** A gzip member whose CRC-32 or size trailer does not match its decoded bytes. */
  | 'checksum'

/** The first defective frame of a compressed log and what follows it. */
export interface FrameDefect {
  /** Always `frame`. */
  readonly kind: 'frame'
  /** Why the frame is defective. */
  readonly reason: FrameDefectReason
  /** The file byte where the defective frame starts. */
  readonly offset: number
  /**
   * The bytes an incomplete last frame decodes to in streaming mode, for salvage: a prefix of its
   * text. Empty for every other reason and whenever the decoder reported an error.
   */
  readonly salvaged: Uint8Array
  /**
   * File offsets after {@link offset} where frame magic starts a frame that decodes (completely, or
   * as a non-empty streaming prefix at the end of the file). The reader decodes each with
   * `walk(file.subarray(offset))` to apply the tail rule (a torn tail is tolerated only if nothing
   * valid follows it).
   */
  readonly laterDecodableFrameOffsets: readonly number[]
}

/** The frames of a compressed log, in file order, up to the first defect. */
export interface FrameWalk {
  /** Every complete frame before the first defect (zstd skippable frames are left out). */
  readonly frames: readonly DecodedFrame[]
  /** The first defective frame; absent when the whole file is complete frames. */
  readonly defect?: FrameDefect
}
