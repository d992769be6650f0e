/**
 * The JSONL text codec (03-persistence.md H1, J5, §8.6): header and batch encoding, and a
 * streaming scanner applying the tail rule T1–T4 to the bytes of a plain log. Shared by the JSONL
 * and memory adapters.
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
import { type ChunkRunRow, isChunkRunRow, packRecords, unpackRow } from '../chunk-runs.js'
import { handedOnJsonTexts, jsonText } from '../../session/json-text.js'
import type { JsonValue } from '../../session/json-value.js'

/** The optional header keys, in stored order (H1). */
const optionalHeaderKeys = [
  'cwd',
  'parentSession',
  'seedLength',
  'origin',
  'delegationDepth',
  'agentPreset',
  'metadata',
] as const

/**
 * Encodes the header line (H1): `{"type":"session", …header}` with keys in the order `type,
 * version, id, createdAt, cwd?, parentSession?, seedLength?, origin?, delegationDepth?,
 * agentPreset?, metadata?` (absent keys omitted), plus `\n`.
 *
 * @param header - a validated header
 * @returns the line, newline included
 */
export function encodeHeaderLine(header: SessionHeader): string {
  const line: Record<string, unknown> = {
    type: 'session',
    version: header.version,
    id: header.id,
    createdAt: header.createdAt,
  }
  for (const key of optionalHeaderKeys) if (header[key] !== undefined) line[key] = header[key]
  return `${jsonText(line as unknown as JsonValue)}\n`
}

/** Options of {@link encodeBatch}. */
export interface EncodeBatchOptions {
  /** Store runs of chunk deltas as chunk-run rows (K2). */
  readonly packChunks: boolean
}

/**
 * Encodes one batch as JSONL (J5): each record as compact `JSON.stringify` output plus `\n`,
 * concatenated; with `packChunks`, chunk runs become rows (K2).
 *
 * @param events - committed events, in order
 * @param options - whether to pack chunk runs
 * @returns the batch text (empty for no events)
 */
export function encodeBatch(events: readonly SessionEvent[], options: EncodeBatchOptions): string {
  // Write-behind measured every event's text at enqueue and handed the texts on with the batch (WB7).
  const texts = handedOnJsonTexts(events)
  let text = ''
  if (!options.packChunks) {
    for (let index = 0; index < events.length; index++)
      text += `${texts?.[index] ?? jsonText(events[index] as unknown as JsonValue)}\n`
    return text
  }
  let at = 0
  for (const record of packRecords(events)) {
    // packRecords keeps every unpacked event as the same object, in order; a row stands for its members.
    if (record === events[at]) {
      text += `${texts?.[at] ?? jsonText(record as unknown as JsonValue)}\n`
      at++
    } else {
      text += `${jsonText(record as unknown as JsonValue)}\n`
      at += (record as ChunkRunRow).values.length
    }
  }
  return text
}

function isSafeNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function isSurfaceOp(value: unknown): boolean {
  if (value === 'append') return true
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const op = value as Record<string, unknown>
  return (
    op['op'] === 'replace' &&
    isSafeNonNegative(op['start']) &&
    isSafeNonNegative(op['end']) &&
    Object.keys(op).length === 3
  )
}

/**
 * Whether `value` is a well-formed event envelope (`02-session.md` §1): keys ⊆ `type, seq, time,
 * data, ignorable, surfaceOp, sourceEventSeqs`; `type` a non-empty string; `seq` a non-negative and
 * `time` a safe integer; `data` present; `ignorable` absent or `true`; `surfaceOp` and
 * `sourceEventSeqs` well-typed when present. Payloads are not checked.
 *
 * @param value - a parsed JSON value or an event
 * @returns `true` for a well-formed envelope
 */
export function isEventEnvelope(value: unknown): value is SessionEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  for (const key in value) {
    switch (key) {
      case 'type':
      case 'seq':
      case 'time':
      case 'data':
      case 'ignorable':
      case 'surfaceOp':
      case 'sourceEventSeqs':
        break
      default:
        return false
    }
  }
  const record = value as Record<string, unknown>
  const type = record['type']
  if (typeof type !== 'string' || type.length === 0) return false
  if (!isSafeNonNegative(record['seq']) || !Number.isSafeInteger(record['time'])) return false
  if (record['data'] === undefined) return false
  const ignorable = record['ignorable']
  if (ignorable !== undefined && ignorable !== true) return false
  const surfaceOp = record['surfaceOp']
  if (surfaceOp !== undefined && !isSurfaceOp(surfaceOp)) return false
  const sources = record['sourceEventSeqs']
  if (sources !== undefined) {
    if (!Array.isArray(sources)) return false
    for (const seq of sources) if (!isSafeNonNegative(seq)) return false
  }
  return true
}

/** A line defect of a plain log (T2). */
export type LineDefect = 'unterminated' | 'unparsable' | 'nul'

/** The tail a scan found after the committed records (T4); the adapter adds `recovered` and `revision`. */
export interface ScannedTail {
  /** `torn`: nothing valid follows the defect; `corrupt`: damage (only with `truncateAtCorruption`). */
  readonly kind: 'torn' | 'corrupt'
  /** The first defect. */
  readonly defect: LineDefect
  /** The byte offset of the defective line. */
  readonly offset: number
  /** The 1-based line number of the defective line. */
  readonly line: number
  /** The bytes from the defect to the end: what a repair cuts. */
  readonly droppedBytes: number
}

/** What a scan of a whole log found. */
export interface ScanResult {
  /** The validated header. */
  readonly header: SessionHeader
  /** The committed events (seq ≥ `fromSeq`), fresh objects parsed from the text. */
  readonly events: SessionEvent[]
  /** The seq the next appended event must carry: the number of committed events. */
  readonly nextSeq: number
  /** The byte length of the header line and the committed records: where a repair cuts. */
  readonly committedBytes: number
  /** Every byte pushed. */
  readonly totalBytes: number
  /** Present iff there is a tail after the committed records. */
  readonly torn?: ScannedTail
}

/** Options of {@link createLogScanner}. */
export interface LogScannerOptions {
  /** The requested session id (named in errors; the header's own id is not compared here). */
  readonly sessionId: string
  /** Where the log is (a file path, `memory:<id>`), named in errors. */
  readonly location: string
  /** Return damage as `torn.kind 'corrupt'` after the valid prefix instead of throwing. */
  readonly truncateAtCorruption?: boolean
  /** Materialize only events with `seq ≥ fromSeq` (rows wholly before it stay packed). @defaultValue 0 */
  readonly fromSeq?: number
  /** Stop after the header line: later bytes are counted but not read (for listings). */
  readonly headerOnly?: boolean
  /**
   * Maps a byte offset of the scanned text to the file byte that `CORRUPT_LOG` and `SEQ_MISMATCH`
   * name: for a compressed log, the start of the frame holding it (T4). @defaultValue the offset itself
   */
  readonly fileOffsetOf?: (textOffset: number) => number
}

/** An incremental reader of a plain JSONL log. */
export interface LogScanner {
  /** The header, once its line was read. */
  readonly header: SessionHeader | undefined
  /**
   * Feeds the next piece of the log. The bytes are not retained (they may be reused by the
   * caller); UTF-8 sequences may be split across pieces.
   *
   * @param bytes - the next bytes of the file
   * @throws {@link PersistenceCorruptionError} (`CORRUPT_HEADER`, `SEQ_MISMATCH`, `CORRUPT_LOG`) and
   *   {@link SessionFormatUnsupportedError} (`FORMAT_TOO_NEW`, `FORMAT_TOO_OLD`) as soon as known
   */
  push(bytes: Uint8Array): void
  /**
   * Ends the input and returns what was found.
   *
   * @returns the scan result
   * @throws the errors of {@link LogScanner.push}; `CORRUPT_HEADER` for a missing or unterminated header line
   */
  end(): ScanResult
}

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

function isRecordValid(value: unknown): value is SessionEvent | ChunkRunRow {
  return isEventEnvelope(value) || isChunkRunRow(value)
}

/** Whether the text after the last NUL of a line is a record (T4). */
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
        this.readLine(text.slice(charStart, charEnd), true, byteEnd - byteStart + 1)
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
      this.readLine(line, wellFormed, byteEnd - byteStart + 1)
      if (this.headerOnly && this.header !== undefined) return
      byteStart = byteEnd + 1
    }
  }

  /** One newline-terminated line (`text` without the newline) of `byteLength` bytes with it. */
  private readLine(text: string, wellFormed: boolean, byteLength: number): void {
    const offset = this.offset
    this.offset += byteLength
    const line = ++this.lineNumber
    if (line === 1) {
      this.header = this.readHeader(text, wellFormed)
      this.committedBytes = byteLength
      return
    }
    if (this.corrupt) return
    if (this.defect !== undefined) {
      if (wellFormed && (isRecordValid(parseLine(text)) || validAfterNul(text))) this.markCorrupt()
      return
    }
    const value = wellFormed ? parseLine(text) : undefined
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
 * Creates a streaming scanner of a plain JSONL log (§8.6): the header line must be complete and
 * pass A13 (version first) and H2; each later line must be a record-valid line (T1) carrying the
 * next seq (T3) up to the first defect (T2); the region from the defect to the end is tolerated as
 * a torn tail only when nothing valid follows (T4). Plain logs never salvage.
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
 * Reads only the header line of a log (A8 listings): later bytes are never parsed.
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
