/**
 * The streaming scanner of a plain JSONL log: reads the header line, then record after record up
 * to the first defect, and decides whether what follows is a tolerable torn tail or damage.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import { SessionFormatUnsupportedError } from '../../errors/session-format-unsupported-error.js'
import type { SessionEvent } from '../../session/session-event.js'
import {
  buildSessionHeader,
  isSessionId,
  SESSION_FORMAT_VERSION,
  type SessionHeader,
} from '../../session/session-header.js'
import { isChunkRunRow, unpackRow } from '../pack-chunks.js'
import { asBatchCheck } from './batch-check.js'
import { CRC32_START, crc32, crc32Final, crc32Update } from './crc32.js'
import { isEventEnvelope } from './jsonl-codec.js'
import type { LineDefect, LogScanner, LogScannerOptions, ScannedTail, ScanResult } from './log-scanner.js'

interface Defect {
  readonly defect: LineDefect
  readonly offset: number
  readonly line: number
}

function parseLine(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A record, or a check line (which follows damage as surely as a record does). */
function isRecordValid(value: unknown): boolean {
  return isEventEnvelope(value) || isChunkRunRow(value) || asBatchCheck(value) !== undefined
}

/** The batch a check line covers, while its lines are read. */
interface CoveredBatch {
  /** The CRC-32 and length the check line names. */
  readonly crc32: number
  readonly bytes: number
  /** The running CRC-32 state and the bytes read so far. */
  state: number
  read: number
  /** Where the check line is (text offset, line): a batch cut short is a torn tail from there. */
  readonly checkOffset: number
  readonly checkLine: number
  /** Where the batch starts (text offset, line), and the scan state before its check line. */
  readonly offset: number
  readonly line: number
  readonly eventCount: number
  readonly expectedSeq: number
  readonly committedBytes: number
}

/** Whether the text after the last NUL of a line is a record. */
function validAfterNul(text: string): boolean {
  const nul = text.lastIndexOf('\0')
  return nul !== -1 && isRecordValid(parseLine(text.slice(nul + 1)))
}

const fatalDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const lenientDecoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })
const NEWLINE = 0x0a

class Scanner implements LogScanner {
  header: SessionHeader | undefined = undefined
  private readonly sessionId: string
  private readonly location: string
  private readonly truncate: boolean
  private readonly fromSeq: number
  private readonly headerOnly: boolean
  private readonly fileOffsetOf: (textOffset: number) => number
  /** The byte offset of the first pending (unterminated) byte. */
  private offset = 0
  private pending: Uint8Array[] = []
  private pendingLength = 0
  private lineNumber = 0
  private readonly events: SessionEvent[] = []
  private expectedSeq = 0
  private committedBytes = 0
  private totalBytes = 0
  private defect: Defect | undefined = undefined
  /** A record-valid line (or text after a NUL) follows the defect. */
  private corrupt = false
  private ended = false
  /** The CRC-32 of the header line, which the check line written with it names. */
  private headerChecksum = 0
  /** The batch the last check line covers, until its last byte is read. */
  private covered: CoveredBatch | undefined = undefined

  constructor(options: LogScannerOptions) {
    this.sessionId = options.sessionId
    this.location = options.location
    this.truncate = options.truncateAtCorruption === true
    this.fromSeq = options.fromSeq ?? 0
    this.headerOnly = options.headerOnly === true
    this.fileOffsetOf = options.fileOffsetOf ?? ((textOffset) => textOffset)
  }

  push(bytes: Uint8Array): void {
    if (this.ended) throw new Error('LogScanner.push called after end()')
    this.totalBytes += bytes.length
    if (this.headerOnly && this.header !== undefined) return
    const last = bytes.lastIndexOf(NEWLINE)
    if (last === -1) {
      if (bytes.length > 0) this.keep(bytes)
      return
    }
    let region = bytes.subarray(0, last + 1)
    if (this.pendingLength > 0) {
      this.pending.push(region)
      region = this.takePending()
    }
    this.readRegion(region)
    if (last + 1 < bytes.length) this.keep(bytes.subarray(last + 1))
  }

  end(): ScanResult {
    if (this.ended) throw new Error('LogScanner.end called twice')
    this.ended = true
    if (this.header === undefined) {
      throw this.headerError(
        this.lineNumber === 0 && this.pendingLength === 0 ? 'the log is empty' : 'the header line is incomplete',
      )
    }
    if (this.pendingLength > 0 && !this.headerOnly) {
      const tail = this.takePending()
      if (this.defect === undefined) {
        this.defect = {
          defect: tail.includes(0) ? 'nul' : 'unterminated',
          offset: this.offset,
          line: this.lineNumber + 1,
        }
      }
    }
    const covered = this.covered
    if (covered !== undefined && !this.headerOnly && !this.corrupt) {
      // A batch cut short of the bytes its check line names: a torn append, from the check line on.
      this.events.length = covered.eventCount
      this.expectedSeq = covered.expectedSeq
      this.committedBytes = covered.committedBytes
      if (this.defect === undefined || this.defect.offset > covered.checkOffset) {
        this.defect = { defect: 'unterminated', offset: covered.checkOffset, line: covered.checkLine }
      }
    }
    const result: {
      header: SessionHeader
      events: SessionEvent[]
      nextSeq: number
      committedBytes: number
      totalBytes: number
      torn?: ScannedTail
    } = {
      header: this.header,
      events: this.events,
      nextSeq: this.expectedSeq,
      committedBytes: this.committedBytes,
      totalBytes: this.totalBytes,
    }
    if (this.defect !== undefined && !this.headerOnly) {
      result.torn = {
        kind: this.corrupt ? 'corrupt' : 'torn',
        defect: this.defect.defect,
        offset: this.defect.offset,
        line: this.defect.line,
        droppedBytes: this.totalBytes - this.committedBytes,
      }
    }
    return result
  }

  private keep(bytes: Uint8Array): void {
    // A copy: the caller may reuse its read buffer.
    this.pending.push(new Uint8Array(bytes))
    this.pendingLength += bytes.length
  }

  private takePending(): Uint8Array {
    const pieces = this.pending
    const first = pieces[0]!
    let joined: Uint8Array
    if (pieces.length === 1) joined = first
    else {
      let length = 0
      for (const piece of pieces) length += piece.length
      joined = new Uint8Array(length)
      let at = 0
      for (const piece of pieces) {
        joined.set(piece, at)
        at += piece.length
      }
    }
    this.pending = []
    this.pendingLength = 0
    return joined
  }

  /** Reads complete lines: `region` ends with `\n`. */
  private readRegion(region: Uint8Array): void {
    let text: string | undefined
    try {
      text = fatalDecoder.decode(region)
    } catch {
      text = undefined
    }
    let byteStart = 0
    if (text !== undefined) {
      let charStart = 0
      while (byteStart < region.length) {
        const charEnd = text.indexOf('\n', charStart)
        const byteEnd = region.indexOf(NEWLINE, byteStart)
        this.readLine(text.slice(charStart, charEnd), true, region.subarray(byteStart, byteEnd + 1))
        if (this.headerOnly && this.header !== undefined) return
        charStart = charEnd + 1
        byteStart = byteEnd + 1
      }
      return
    }
    // Invalid UTF-8 somewhere: decode line by line; a line that does not decode is not record-valid.
    while (byteStart < region.length) {
      const byteEnd = region.indexOf(NEWLINE, byteStart)
      const bytes = region.subarray(byteStart, byteEnd)
      let line: string
      let wellFormed = true
      try {
        line = fatalDecoder.decode(bytes)
      } catch {
        line = lenientDecoder.decode(bytes)
        wellFormed = false
      }
      this.readLine(line, wellFormed, region.subarray(byteStart, byteEnd + 1))
      if (this.headerOnly && this.header !== undefined) return
      byteStart = byteEnd + 1
    }
  }

  /** One newline-terminated line (`text` without the newline): `bytes`, newline included. */
  private readLine(text: string, wellFormed: boolean, bytes: Uint8Array): void {
    const byteLength = bytes.length
    const offset = this.offset
    this.offset += byteLength
    const line = ++this.lineNumber
    if (line === 1) {
      this.header = this.readHeader(text, wellFormed)
      if (!this.headerOnly) this.headerChecksum = crc32(bytes)
      this.committedBytes = byteLength
      return
    }
    if (this.corrupt) return
    const covered = this.covered
    if (covered !== undefined) {
      this.readCovered(covered, text, wellFormed, bytes)
      return
    }
    const value = wellFormed ? parseLine(text) : undefined
    const check = this.defect === undefined ? asBatchCheck(value) : undefined
    if (check !== undefined) {
      this.startCovered(check, offset, line)
      return
    }
    this.readRecord(text, wellFormed, value, offset, line)
  }

  /** A check line: the header's checksum, if it names one, then the batch it covers. */
  private startCovered(check: NonNullable<ReturnType<typeof asBatchCheck>>, offset: number, line: number): void {
    if (check.header !== undefined && (line !== 2 || check.header !== this.headerChecksum)) {
      throw this.headerError(
        line === 2 ? 'it does not match the checksum on line 2' : `line ${line} names a header checksum`,
      )
    }
    if (check.bytes === 0) {
      this.committedBytes = this.offset
      return
    }
    // The batch commits as a whole once its checksum matches: until then the committed bytes end
    // before the check line, so a repair of a batch cut short cuts the check line too.
    this.covered = {
      crc32: check.crc32,
      bytes: check.bytes,
      state: CRC32_START,
      read: 0,
      checkOffset: offset,
      checkLine: line,
      offset: this.offset,
      line: line + 1,
      eventCount: this.events.length,
      expectedSeq: this.expectedSeq,
      committedBytes: this.committedBytes,
    }
  }

  /** A line of a covered batch: read as a record, and the batch checked at its last byte. */
  private readCovered(covered: CoveredBatch, text: string, wellFormed: boolean, bytes: Uint8Array): void {
    covered.state = crc32Update(covered.state, bytes)
    covered.read += bytes.length
    const value = wellFormed ? parseLine(text) : undefined
    if (covered.read < covered.bytes) {
      this.readRecord(text, wellFormed, value, this.offset - bytes.length, this.lineNumber)
      if (!this.corrupt) this.committedBytes = covered.committedBytes
      return
    }
    this.covered = undefined
    if (covered.read === covered.bytes && crc32Final(covered.state) === covered.crc32) {
      this.readRecord(text, wellFormed, value, this.offset - bytes.length, this.lineNumber)
      return
    }
    // Every byte the check names is here and they differ from what was written: damage, wherever
    // in the file it is (a torn append never leaves a whole batch behind).
    this.checksumMismatch(covered)
  }

  private checksumMismatch(covered: CoveredBatch): void {
    const defect: Defect = { defect: 'unparsable', offset: covered.offset, line: covered.line }
    if (this.truncate) {
      this.events.length = covered.eventCount
      this.expectedSeq = covered.expectedSeq
      this.committedBytes = covered.committedBytes
      this.defect = defect
      this.corrupt = true
      return
    }
    const offset = this.fileOffsetOf(covered.offset)
    throw new PersistenceCorruptionError({
      code: ErrorCode.CORRUPT_LOG,
      sessionId: this.sessionId,
      detail:
        `session log ${this.location} is damaged at byte ${offset} (line ${covered.line}): the batch there fails its checksum; ` +
        `nothing was changed; "yoke repair --truncate-at-corruption ${this.sessionId}" keeps the valid part and moves the damaged file aside`,
      location: this.location,
      offset,
      line: covered.line,
      defect: 'unparsable',
    })
  }

  /** A line outside a check line: a record, or the first defect and what follows it. */
  private readRecord(text: string, wellFormed: boolean, value: unknown, offset: number, line: number): void {
    if (this.corrupt) return
    if (this.defect !== undefined) {
      if (wellFormed && (isRecordValid(value) || validAfterNul(text))) this.markCorrupt()
      return
    }
    if (isEventEnvelope(value)) {
      if (value.seq !== this.expectedSeq) {
        this.seqMismatch(value.seq, offset, line)
        return
      }
      if (value.seq >= this.fromSeq) this.events.push(value)
      this.expectedSeq++
    } else if (isChunkRunRow(value)) {
      if (value.seq0 !== this.expectedSeq) {
        this.seqMismatch(value.seq0, offset, line)
        return
      }
      const count = value.values.length
      if (value.seq0 + count > this.fromSeq) {
        for (const event of unpackRow(value)) if (event.seq >= this.fromSeq) this.events.push(event)
      }
      this.expectedSeq += count
    } else {
      this.defect = { defect: text.includes('\0') ? 'nul' : 'unparsable', offset, line }
      if (wellFormed && validAfterNul(text)) this.markCorrupt()
      return
    }
    this.committedBytes = this.offset
  }

  private seqMismatch(actual: number, textOffset: number, line: number): void {
    if (this.truncate) {
      this.defect = { defect: 'unparsable', offset: textOffset, line }
      this.corrupt = true
      return
    }
    const offset = this.fileOffsetOf(textOffset)
    throw new PersistenceCorruptionError({
      code: ErrorCode.SEQ_MISMATCH,
      sessionId: this.sessionId,
      detail: `session log ${this.location} has seq ${actual} on line ${line} (byte ${offset}) where seq ${this.expectedSeq} was expected; nothing was changed`,
      location: this.location,
      offset,
      line,
      seq: actual,
      expected: this.expectedSeq,
      actual,
    })
  }

  private markCorrupt(): void {
    this.corrupt = true
    if (this.truncate) return
    const defect = this.defect!
    const offset = this.fileOffsetOf(defect.offset)
    throw new PersistenceCorruptionError({
      code: ErrorCode.CORRUPT_LOG,
      sessionId: this.sessionId,
      detail:
        `session log ${this.location} is damaged at byte ${offset} (line ${defect.line}) and valid records follow; ` +
        `nothing was changed; "yoke repair --truncate-at-corruption ${this.sessionId}" keeps the valid part and moves the damaged file aside`,
      location: this.location,
      offset,
      line: defect.line,
      defect: defect.defect,
    })
  }

  private headerError(problem: string, cause?: unknown): PersistenceCorruptionError {
    return new PersistenceCorruptionError({
      code: ErrorCode.CORRUPT_HEADER,
      sessionId: this.sessionId,
      detail: `session log ${this.location} has a damaged header (line 1): ${problem}; nothing was changed`,
      location: this.location,
      offset: 0,
      line: 1,
      ...(cause === undefined ? {} : { cause }),
    })
  }

  private readHeader(text: string, wellFormed: boolean): SessionHeader {
    if (!wellFormed) throw this.headerError('it is not valid UTF-8')
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch (error) {
      throw this.headerError('it is not JSON', error)
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw this.headerError('it is not a JSON object')
    const record = raw as Record<string, unknown>
    if (record['type'] !== 'session') throw this.headerError('its "type" is not "session"')
    const version = record['version']
    if (typeof version !== 'number') throw this.headerError('its "version" is not a number')
    if (version !== SESSION_FORMAT_VERSION) throw this.versionError(version)
    const id = record['id']
    if (!isSessionId(id)) throw this.headerError('its "id" is not a valid session id')
    const input: Record<string, unknown> = {}
    for (const key of Object.keys(record)) if (key !== 'type') input[key] = record[key]
    try {
      return buildSessionHeader(input, id, -1)
    } catch (error) {
      throw this.headerError('it does not pass the header schema', error)
    }
  }

  private versionError(version: number): SessionFormatUnsupportedError {
    const newer = version > SESSION_FORMAT_VERSION
    return new SessionFormatUnsupportedError({
      code: newer ? ErrorCode.FORMAT_TOO_NEW : ErrorCode.FORMAT_TOO_OLD,
      sessionId: this.sessionId,
      detail: newer
        ? `is stored in log format v${version}, newer than the v${SESSION_FORMAT_VERSION} this Yoke reads; upgrade Yoke to open it (log: ${this.location})`
        : `is stored in log format v${version}, older than the v${SESSION_FORMAT_VERSION} this Yoke reads, and no upgrader handles it (log: ${this.location})`,
      storedVersion: version,
      supportedVersion: SESSION_FORMAT_VERSION,
      direction: newer ? 'newer' : 'older',
      location: this.location,
    })
  }
}

/**
 * Creates a streaming scanner of a plain JSONL log: the header line must be complete, carry a
 * supported version (checked first) and pass the header schema; each later line must be a
 * well-formed record carrying the next seq, up to the first defect; the region from the defect to
 * the end is tolerated as a torn tail only when nothing valid follows. Plain logs never salvage.
 *
 * @param options - the session id and location for errors, and what to return
 * @returns a fresh scanner
 * @example
 * ```ts
 * const scanner = createLogScanner({ sessionId: 's1', location: file })
 * for await (const piece of createReadStream(file)) scanner.push(piece)
 * const { header, events, torn } = scanner.end()
 * ```
 */
export function createLogScanner(options: LogScannerOptions): LogScanner {
  return new Scanner(options)
}

const encoder = new TextEncoder()

/**
 * Scans a whole in-memory log in one call ({@link createLogScanner}).
 *
 * @param bytes - the log: bytes, a list of pieces, or text
 * @param options - as {@link createLogScanner}
 * @returns the scan result
 * @throws as {@link LogScanner.end}
 */
export function scanLog(bytes: Uint8Array | readonly Uint8Array[] | string, options: LogScannerOptions): ScanResult {
  const scanner = new Scanner(options)
  if (typeof bytes === 'string') scanner.push(encoder.encode(bytes))
  else if (bytes instanceof Uint8Array) scanner.push(bytes)
  else for (const piece of bytes) scanner.push(piece)
  return scanner.end()
}

/**
 * Reads only the header line of a log (for listings): later bytes are never parsed.
 *
 * @param bytes - at least the first line of the log (more is ignored)
 * @param options - the session id and location for errors
 * @returns the validated header
 * @throws {@link PersistenceCorruptionError} `CORRUPT_HEADER`, {@link SessionFormatUnsupportedError}
 */
export function scanHeader(
  bytes: Uint8Array | readonly Uint8Array[] | string,
  options: Pick<LogScannerOptions, 'sessionId' | 'location'>,
): SessionHeader {
  return scanLog(bytes, { ...options, headerOnly: true }).header
}
