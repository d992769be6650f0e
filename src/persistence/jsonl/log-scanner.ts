/**
 * What a scan of a plain JSONL log reports: the header, the committed events, and the tail a crash
 * or damage left after them.
 *
 * @module
 */
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'

/** A line defect of a plain log. */
export type LineDefect = 'unterminated' | 'unparsable' | 'nul'

/** The tail a scan found after the committed records; the adapter adds `recovered` and `revision`. */
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
   * name: for a compressed log, the start of the frame holding it. @defaultValue the offset itself
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
