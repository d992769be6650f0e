/**
 * Reading one JSONL log file: one `fstat` fixes the size read, plain text goes through the line
 * scanner in `readChunkBytes` pieces, compressed files are walked frame by frame with the scanner
 * over the decoded text, and a torn last frame is salvaged. The result also says how a repair cuts
 * the file.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import { isChunkRunRow, unpackRow } from '../pack-chunks.js'
import type { FrameCodec } from './frame-codec.js'
import { isEventEnvelope } from './jsonl-codec.js'
import type { ScannedTail } from './log-scanner.js'
import { createLogScanner, scanHeader, scanLog } from './scan-log.js'
import type { JsonlFileHandle, JsonlFileSystem } from './jsonl-file-system.js'
import { readRange } from './jsonl-file-operations.js'

/** What a read of a log file found. */
export interface ReadLog {
  /** The validated header. */
  readonly header: SessionHeader
  /** Committed events (from `fromSeq`), then the salvaged ones. */
  readonly events: SessionEvent[]
  /** The salvaged records of a torn last frame (compressed logs only). */
  readonly recovered: SessionEvent[]
  /** The tail after the committed records (file offsets; `line` of the decoded text). */
  readonly tail?: Omit<ScannedTail, 'defect'> & { readonly defect: ScannedTail['defect'] | 'frame' }
  /** `dev:ino:size:mtimeNs` of the `fstat`. */
  readonly revision: string
  /** The size that `fstat` fixed. */
  readonly size: number
  /** How a repair cuts this exact content. */
  readonly plan: RepairPlan
}

/** How a repair rewrites a log. */
export interface RepairPlan {
  /** File bytes kept as they are: the committed prefix (compressed: whole frames). */
  readonly keepBytes: number
  /** The committed (and salvaged) events after `keepBytes` that a repair writes again. */
  readonly rewrite: readonly SessionEvent[]
  /** The seq after every kept and rewritten event: where the closers start. */
  readonly nextSeq: number
  /** Whether the header frame itself must be written again (it held damage). */
  readonly rewriteHeader: boolean
}

/** Options of {@link readLogFile}. */
export interface ReadLogOptions {
  /** The file system. */
  readonly fileSystem: JsonlFileSystem
  /** The session id (named in errors). */
  readonly sessionId: string
  /** The log file. */
  readonly path: string
  /** The frame codec, or `undefined` for plain JSONL. */
  readonly frames: FrameCodec | undefined
  /** The piece size of plain reads. */
  readonly readChunkBytes: number
  /** Return damage as a `corrupt` tail instead of throwing. */
  readonly truncateAtCorruption?: boolean
  /** Materialize only events with `seq ≥ fromSeq` (plain logs). */
  readonly fromSeq?: number
  /** Aborts between pieces. */
  readonly signal?: AbortSignal | undefined
}

/**
 * The revision of a bigint `fstat`: `dev:ino:size:mtimeNs`, which changes with every write.
 *
 * @internal
 */
export function revisionOf(stats: {
  readonly dev: bigint
  readonly ino: bigint
  readonly size: bigint
  readonly mtimeNs: bigint
}): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`
}

/**
 * Reads the log at `options.path` through an open handle.
 *
 * @internal
 * @throws `PersistenceCorruptionError`, `SessionFormatUnsupportedError`, raw I/O errors
 */
export async function readLogFile(handle: JsonlFileHandle, options: ReadLogOptions): Promise<ReadLog> {
  const { fileSystem } = options
  const stats = await fileSystem.fstat(handle)
  const size = Number(stats.size)
  const revision = revisionOf(stats)
  if (options.frames === undefined) return readPlain(handle, options, size, revision)
  const bytes = await readRange(fileSystem, handle, 0, size)
  options.signal?.throwIfAborted()
  return readFrames(bytes, options, options.frames, revision)
}

async function readPlain(
  handle: JsonlFileHandle,
  options: ReadLogOptions,
  size: number,
  revision: string,
): Promise<ReadLog> {
  const scanner = createLogScanner({
    sessionId: options.sessionId,
    location: options.path,
    ...(options.truncateAtCorruption === true ? { truncateAtCorruption: true } : {}),
    ...(options.fromSeq === undefined ? {} : { fromSeq: options.fromSeq }),
  })
  // Two pieces alternate: the next read is in flight while the scanner parses the current one.
  const pieceBytes = Math.min(Math.max(size, 1), options.readChunkBytes)
  const pieces = [new Uint8Array(pieceBytes), new Uint8Array(pieceBytes)] as const
  const readPiece = (piece: Uint8Array, position: number): Promise<{ readonly bytesRead: number }> =>
    options.fileSystem.read(handle, piece, 0, Math.min(piece.length, size - position), position)
  let position = 0
  let current = 0
  let pending = size > 0 ? readPiece(pieces[0], 0) : undefined
  try {
    while (pending !== undefined) {
      const { bytesRead } = await pending
      pending = undefined
      options.signal?.throwIfAborted()
      if (bytesRead === 0) break
      const piece = pieces[current] as Uint8Array
      position += bytesRead
      current ^= 1
      if (position < size) pending = readPiece(pieces[current] as Uint8Array, position)
      scanner.push(piece.subarray(0, bytesRead))
    }
  } finally {
    // A read still in flight (the scanner threw, or the signal aborted) settles before the caller closes the file.
    if (pending !== undefined) await pending.catch(() => undefined)
  }
  const result = scanner.end()
  return {
    header: result.header,
    events: result.events,
    recovered: [],
    ...(result.torn === undefined ? {} : { tail: result.torn }),
    revision,
    size,
    plan: { keepBytes: result.committedBytes, rewrite: [], nextSeq: result.nextSeq, rewriteHeader: false },
  }
}

function countLines(bytes: Uint8Array): number {
  let count = 0
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count++
  return count
}

const fatalDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The newline-terminated lines of `bytes` as text, or `[]` when they are not UTF-8. */
function completeLines(bytes: Uint8Array): string[] {
  const end = bytes.lastIndexOf(0x0a)
  if (end === -1) return []
  try {
    return fatalDecoder.decode(bytes.subarray(0, end)).split('\n')
  } catch {
    return []
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isRecord(value: unknown): boolean {
  return isEventEnvelope(value) || isChunkRunRow(value)
}

/**
 * Whether decoded text holds a record-valid line, or record-valid text after a NUL: what makes
 * damage corruption instead of a torn tail.
 */
function holdsRecord(bytes: Uint8Array): boolean {
  for (const line of completeLines(bytes)) {
    if (isRecord(parse(line))) return true
    const nul = line.lastIndexOf('\0')
    if (nul !== -1 && isRecord(parse(line.slice(nul + 1)))) return true
  }
  return false
}

/** Salvage: the leading record-valid, seq-contiguous lines of a torn frame's decoded prefix. */
function salvage(bytes: Uint8Array, firstSeq: number): SessionEvent[] {
  const events: SessionEvent[] = []
  let next = firstSeq
  for (const line of completeLines(bytes)) {
    const value = parse(line)
    if (isEventEnvelope(value) && value.seq === next) {
      events.push(value)
      next++
    } else if (isChunkRunRow(value) && value.seq0 === next) {
      for (const event of unpackRow(value)) events.push(event)
      next += value.values.length
    } else {
      break
    }
  }
  return events
}

function readFrames(bytes: Uint8Array, options: ReadLogOptions, codec: FrameCodec, revision: string): ReadLog {
  const location = options.path
  const size = bytes.length
  const walk = codec.walk(bytes)
  const first = walk.frames[0]
  if (first === undefined) throw headerFrameError(options.sessionId, location, size)
  const truncate = options.truncateAtCorruption === true
  const textStarts: number[] = []
  let textLength = 0
  let lines = 0
  for (const frame of walk.frames) {
    textStarts.push(textLength)
    textLength += frame.decoded.length
    lines += countLines(frame.decoded)
  }
  /** The index of the frame whose decoded text holds `textOffset`. */
  const frameIndexOf = (textOffset: number): number => {
    let index = textStarts.length - 1
    while (index > 0 && (textStarts[index] ?? 0) > textOffset) index--
    return index
  }
  const scanner = createLogScanner({
    sessionId: options.sessionId,
    location,
    // An error names the file byte of the frame holding the defect, not its decoded offset.
    fileOffsetOf: (textOffset) => (walk.frames[frameIndexOf(textOffset)] ?? first).offset,
    ...(truncate ? { truncateAtCorruption: true } : {}),
  })
  for (const frame of walk.frames) scanner.push(frame.decoded)
  const result = scanner.end()
  const defect = walk.defect
  /** Whether a decodable frame holding a record starts at one of `offsets`. */
  const recordsAt = (offsets: readonly number[]): boolean => {
    for (const offset of offsets) {
      const later = codec.walk(bytes.subarray(offset))
      if (later.frames.some((frame) => holdsRecord(frame.decoded))) return true
      if (later.defect !== undefined && holdsRecord(later.defect.salvaged)) return true
    }
    return false
  }
  const laterRecords = (): boolean => defect !== undefined && recordsAt(defect.laterDecodableFrameOffsets)
  const corruptLog = (
    offset: number,
    line: number,
    kind: 'unterminated' | 'unparsable' | 'nul' | 'frame',
  ): PersistenceCorruptionError =>
    new PersistenceCorruptionError({
      code: ErrorCode.CORRUPT_LOG,
      sessionId: options.sessionId,
      detail:
        `session log ${location} is damaged at byte ${offset} (line ${line}) and valid records follow; nothing was changed; ` +
        `"yoke repair --truncate-at-corruption ${options.sessionId}" keeps the valid part and moves the damaged file aside`,
      location,
      offset,
      line,
      defect: kind,
    })

  const base = { header: result.header, revision, size }
  if (result.torn !== undefined) {
    // A line defect inside a complete frame: keep the frames before it, rewrite its valid records.
    const torn = result.torn
    const index = frameIndexOf(result.committedBytes)
    const frame = walk.frames[index] ?? first
    let kind = torn.kind
    // A damaged block size can make this frame run over the later ones and still decode (to
    // garbage): frames that start anywhere after its first byte make the damage corruption too,
    // since a torn append only ever leaves the end of the file.
    if (
      kind === 'torn' &&
      ((defect !== undefined && (holdsRecord(defect.salvaged) || laterRecords())) ||
        recordsAt(codec.findLater(bytes, frame.offset + 1)))
    ) {
      if (!truncate) throw corruptLog(frame.offset, torn.line, torn.defect)
      kind = 'corrupt'
    }
    const before =
      index === 0
        ? 0
        : scanLog(
            walk.frames.slice(0, index).map((each) => each.decoded),
            { sessionId: options.sessionId, location },
          ).nextSeq
    const rewrite = result.events.slice(before)
    return {
      ...base,
      events: result.events,
      recovered: [],
      tail: { kind, defect: torn.defect, offset: frame.offset, line: torn.line, droppedBytes: size - frame.offset },
      plan: { keepBytes: index === 0 ? 0 : frame.offset, rewrite, nextSeq: result.nextSeq, rewriteHeader: index === 0 },
    }
  }
  if (defect === undefined) {
    return {
      ...base,
      events: result.events,
      recovered: [],
      plan: { keepBytes: size, rewrite: [], nextSeq: result.nextSeq, rewriteHeader: false },
    }
  }
  let kind: 'torn' | 'corrupt' = 'torn'
  if (laterRecords()) {
    if (!truncate) throw corruptLog(defect.offset, lines + 1, 'frame')
    kind = 'corrupt'
  }
  const recovered = salvage(defect.salvaged, result.nextSeq)
  return {
    ...base,
    events: recovered.length === 0 ? result.events : [...result.events, ...recovered],
    recovered,
    tail: { kind, defect: 'frame', offset: defect.offset, line: lines + 1, droppedBytes: size - defect.offset },
    plan: {
      keepBytes: defect.offset,
      rewrite: recovered,
      nextSeq: result.nextSeq + recovered.length,
      rewriteHeader: false,
    },
  }
}

const LIST_HEADER_BYTES = 65_536

/**
 * Reads only the header of a log, as listing does: the first line, or the first frame.
 *
 * @internal
 * @throws `PersistenceCorruptionError CORRUPT_HEADER`, `SessionFormatUnsupportedError`
 */
export async function readLogHeader(
  handle: JsonlFileHandle,
  options: Pick<ReadLogOptions, 'fileSystem' | 'sessionId' | 'path' | 'frames' | 'readChunkBytes'>,
): Promise<SessionHeader> {
  const { fileSystem, sessionId, path: location, frames } = options
  const size = Number((await fileSystem.fstat(handle)).size)
  if (frames === undefined) {
    const pieces: Uint8Array[] = []
    let position = 0
    while (position < size) {
      const piece = await readRange(fileSystem, handle, position, Math.min(options.readChunkBytes, size - position))
      if (piece.length === 0) break
      pieces.push(piece)
      position += piece.length
      if (piece.includes(0x0a)) break
    }
    return scanHeader(pieces, { sessionId, location })
  }
  for (let length = Math.min(size, LIST_HEADER_BYTES); ; length = Math.min(size, length * 4)) {
    const first = frames.walk(await readRange(fileSystem, handle, 0, length)).frames[0]
    if (first !== undefined) return scanHeader(first.decoded, { sessionId, location })
    if (length >= size) throw headerFrameError(sessionId, location, size)
  }
}

function headerFrameError(sessionId: string, location: string, size: number): PersistenceCorruptionError {
  return new PersistenceCorruptionError({
    code: ErrorCode.CORRUPT_HEADER,
    sessionId,
    detail: `session log ${location} has a damaged header (line 1): its first frame ${size === 0 ? 'is missing' : 'does not decode'}; nothing was changed`,
    location,
    offset: 0,
    line: 1,
    defect: 'frame',
  })
}
