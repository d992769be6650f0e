import { Gunzip, gzipSync } from 'fflate'
import { concatBytes } from './concat-bytes.js'
import { crc32 } from './crc32.js'
import type { DecodedFrame, FrameDefectReason, FrameWalk } from './frame-walk.js'

/** The walk of a gzip log: one frame per member, decoded one by one. */
export type GzipWalk = FrameWalk

const GZIP_MAGIC = [0x1f, 0x8b, 0x08] as const
const TRAILER_BYTES = 8
/** The smallest member: a 10-byte header, a 2-byte empty deflate stream, the trailer. */
const MINIMUM_MEMBER_BYTES = 20
/**
 * Bytes fed to the decoder per push: starting small and doubling, so decoding a member costs about
 * its own size (fflate copies the unconsumed rest of each push).
 */
const FIRST_PUSH_BYTES = 4_096
const MAXIMUM_PUSH_BYTES = 262_144

/**
 * Compresses one batch into one independent gzip member: fflate level 6, mtime 0, no file name.
 * Concatenated members are a valid gzip file (`gunzip -c` prints them all).
 *
 * @param bytes - the batch's JSONL text
 * @returns the member bytes
 */
export function encodeGzipFrame(bytes: Uint8Array): Uint8Array {
  return gzipSync(bytes, { level: 6, mtime: 0 })
}

/**
 * Decodes a gzip log member by member with fflate's streaming `Gunzip` (its one-shot `gunzipSync`
 * stops after the first member): the decoder reports where each member ends, and each member's
 * CRC-32 and size trailer are checked here (fflate does not). Stops at the first defective member:
 * one that runs past the end of the file (its streaming prefix is salvaged), fails to decode, fails
 * its trailer, or has no gzip magic. Then lists the later offsets where gzip magic starts a
 * decodable member (any of them makes the damage corruption rather than a torn tail).
 *
 * @param file - the stored bytes
 * @returns the complete members and the first defect, if any
 */
export function decodeGzipMembers(file: Uint8Array): GzipWalk {
  const frames: DecodedFrame[] = []
  let offset = 0
  while (offset < file.length) {
    const member = decodeMember(file, offset, file.length, true)
    if (member.kind === 'complete') {
      frames.push({ offset, length: member.length, decoded: member.decoded })
      offset += member.length
      continue
    }
    return {
      frames,
      defect: {
        kind: 'frame',
        reason: member.kind,
        offset,
        salvaged: member.kind === 'incomplete' ? member.salvaged : new Uint8Array(0),
        laterDecodableFrameOffsets: findLaterMembers(file, offset + 1),
      },
    }
  }
  return { frames }
}

type MemberResult =
  | { readonly kind: 'complete'; readonly length: number; readonly decoded: Uint8Array }
  | { readonly kind: 'incomplete'; readonly salvaged: Uint8Array }
  | { readonly kind: Exclude<FrameDefectReason, 'incomplete'> }

/**
 * Decodes the member at `start` within `file[start, end)`. `search` allows the fallback that finds
 * the end of a complete member followed by bytes the decoder rejects (see {@link findTrailer}).
 */
function decodeMember(file: Uint8Array, start: number, end: number, search: boolean): MemberResult {
  const bytes = file.subarray(start, end)
  for (let index = 0; index < GZIP_MAGIC.length; index++) {
    if (index >= bytes.length) return { kind: 'incomplete', salvaged: new Uint8Array(0) }
    if (bytes[index] !== GZIP_MAGIC[index]) return { kind: 'bad-magic' }
  }
  const run = runDecoder(bytes)
  if (run.memberLength !== undefined) return checkTrailer(bytes, run.memberLength, run.decoded)
  if (search && run.decoded.length > 0) {
    const found = findTrailer(file, start, end, run.decoded)
    if (found !== undefined) return found
  }
  return run.failed ? { kind: 'undecodable' } : { kind: 'incomplete', salvaged: run.decoded }
}

interface DecoderRun {
  /** The member's length, when the decoder saw it end (its next header started). */
  readonly memberLength: number | undefined
  /** The member's decoded bytes (complete, or the streaming prefix). */
  readonly decoded: Uint8Array
  /** The decoder rejected the member's bytes (or bytes after it, when the end was not seen). */
  readonly failed: boolean
}

/** Thrown from `onmember` to stop the decoder once the member it decodes has ended. */
class MemberEnd {}

/**
 * Feeds the member's bytes to a fresh `Gunzip`, then a bare gzip header: fflate reports a member's
 * end only when the next member's header is complete (`onmember` with its offset), so the header
 * makes a member that ends exactly at the end of `bytes` visible. Output is recorded only until
 * the member ends, and never for the appended header.
 */
function runDecoder(bytes: Uint8Array): DecoderRun {
  const chunks: Uint8Array[] = []
  let recording = true
  let memberLength: number | undefined
  const gunzip = new Gunzip((data) => {
    if (recording && data.length > 0) chunks.push(data)
  })
  gunzip.onmember = (offset) => {
    recording = false
    memberLength = offset
    throw new MemberEnd()
  }
  let failed = false
  try {
    for (
      let at = 0, size = FIRST_PUSH_BYTES;
      at < bytes.length;
      at += size, size = Math.min(size * 2, MAXIMUM_PUSH_BYTES)
    ) {
      gunzip.push(bytes.subarray(at, at + size), false)
    }
  } catch (error) {
    if (!(error instanceof MemberEnd)) failed = true
  }
  if (memberLength === undefined && !failed) {
    recording = false
    try {
      gunzip.push(Uint8Array.of(...GZIP_MAGIC, 0, 0, 0, 0, 0, 0, 0x03), false)
    } catch {
      // The member did not end where the header was appended: it is incomplete or followed by junk.
    }
  }
  const ended = memberLength !== undefined && memberLength <= bytes.length ? memberLength : undefined
  return { memberLength: ended, decoded: concatBytes(chunks), failed }
}

function checkTrailer(bytes: Uint8Array, length: number, decoded: Uint8Array): MemberResult {
  if (length < MINIMUM_MEMBER_BYTES) return { kind: 'undecodable' }
  const crc = readUint32(bytes, length - TRAILER_BYTES)
  const size = readUint32(bytes, length - 4)
  if (crc !== crc32(decoded) || size !== decoded.length >>> 0) return { kind: 'checksum' }
  return { kind: 'complete', length, decoded }
}

/**
 * Fallback for a member the decoder did not see end: when it is complete but followed by 1–3
 * bytes or by bytes without gzip magic, the appended header cannot start a member. Its trailer
 * (CRC-32 and size of the decoded bytes) is then searched for, and a candidate end accepted only
 * when the decoder, given exactly the bytes up to it, reports the member ending there. Skipped for
 * an empty output (never written; its all-zero trailer would match every run of NUL bytes).
 */
function findTrailer(file: Uint8Array, start: number, end: number, decoded: Uint8Array): MemberResult | undefined {
  const crc = crc32(decoded)
  const size = decoded.length >>> 0
  for (let at = start + MINIMUM_MEMBER_BYTES - TRAILER_BYTES; at + TRAILER_BYTES <= end; at++) {
    if (readUint32(file, at) !== crc || readUint32(file, at + 4) !== size) continue
    const memberEnd = at + TRAILER_BYTES
    const member = decodeMember(file, start, memberEnd, false)
    if (member.kind === 'complete' && member.length === memberEnd - start) return member
  }
  return undefined
}

/**
 * Offsets from `from` on where gzip magic starts a member that decodes (completely, or as a
 * non-empty streaming prefix at the end of the file).
 *
 * @param file - the stored bytes
 * @param from - the first offset to look at
 * @returns the offsets, in file order
 * @internal
 */
export function findLaterMembers(file: Uint8Array, from: number): number[] {
  const offsets: number[] = []
  for (let at = from; at + GZIP_MAGIC.length <= file.length; at++) {
    if (file[at] !== GZIP_MAGIC[0] || file[at + 1] !== GZIP_MAGIC[1] || file[at + 2] !== GZIP_MAGIC[2]) continue
    const member = decodeMember(file, at, file.length, true)
    if (member.kind === 'complete') {
      offsets.push(at)
      at += member.length - 1
    } else if (member.kind === 'incomplete' && member.salvaged.length > 0) {
      offsets.push(at)
    }
  }
  return offsets
}

function readUint32(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) | ((bytes[at + 2] ?? 0) << 16) | ((bytes[at + 3] ?? 0) << 24)) >>> 0
  )
}
