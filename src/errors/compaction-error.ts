import { causeOf } from './cause-of.js'
import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link CompactionError}. */
export type CompactionErrorCode =
  | typeof ErrorCode.COMPACTION_BUSY
  | typeof ErrorCode.COMPACTION_STALE
  | typeof ErrorCode.COMPACTION_ABORTED
  | typeof ErrorCode.SUMMARY_FAILED
  | typeof ErrorCode.SUMMARY_EMPTY
  | typeof ErrorCode.SUMMARY_NOT_SMALLER
  | typeof ErrorCode.COMPACTION_COMMIT_FAILED
  | typeof ErrorCode.INVALID_RANGE

/** Why a `compactRange` span was refused (`INVALID_RANGE`). */
export type InvalidRangeReason = 'start-not-on-surface' | 'end-not-on-surface' | 'reversed' | 'unbalanced' | 'open-step'

/** The fields a {@link CompactionError} may carry besides its code. */
export interface CompactionErrorFields {
  /** The session compacted. */
  readonly sessionId: string
  /** The compaction id, when a bracket was opened. */
  readonly compactionId?: string | undefined
  /** What went wrong, in words (the message ends with it). */
  readonly detail: string
  /** For `SUMMARY_NOT_SMALLER`: the estimate of the shadowed span. */
  readonly shadowedTokens?: number | undefined
  /** For `SUMMARY_NOT_SMALLER`: the estimate of the framed checkpoint. */
  readonly summaryTokens?: number | undefined
  /** For `INVALID_RANGE`: why the span was refused. */
  readonly reason?: InvalidRangeReason | undefined
  /** For `INVALID_RANGE`: the `start` asked for. */
  readonly start?: number | undefined
  /** For `INVALID_RANGE`: the `end` asked for. */
  readonly end?: number | undefined
  /** The abort reason, the summarizer's error or the rejected append's error. */
  readonly cause?: unknown
}

/**
 * A compaction failed or was refused. A failure inside a bracket is also
 * logged as `compaction/end { error: { code, message } }`; the surface is unchanged.
 */
export class CompactionError extends HarnessError {
  static override readonly brand: string = 'CompactionError'
  declare readonly code: CompactionErrorCode
  /** The session compacted. */
  readonly sessionId: string
  /** The compaction id, when a bracket was opened. */
  readonly compactionId: string | undefined
  /** What went wrong, in words (the end of the message). */
  readonly detail: string
  /** For `SUMMARY_NOT_SMALLER`: the estimate of the shadowed span. */
  readonly shadowedTokens: number | undefined
  /** For `SUMMARY_NOT_SMALLER`: the estimate of the framed checkpoint. */
  readonly summaryTokens: number | undefined
  /** For `INVALID_RANGE`: why the span was refused. */
  readonly reason: InvalidRangeReason | undefined
  /** For `INVALID_RANGE`: the `start` asked for. */
  readonly start: number | undefined
  /** For `INVALID_RANGE`: the `end` asked for. */
  readonly end: number | undefined

  /**
   * @param code - the stable code
   * @param fields - the session, the compaction id, the detail text and the code's fields
   */
  constructor(code: CompactionErrorCode, fields: CompactionErrorFields) {
    const subject =
      fields.compactionId === undefined
        ? `compaction of session "${fields.sessionId}"`
        : `compaction "${fields.compactionId}" of session "${fields.sessionId}"`
    super(code, `${subject} failed (${code}): ${fields.detail}`, causeOf(fields))
    this.sessionId = fields.sessionId
    this.compactionId = fields.compactionId
    this.detail = fields.detail
    this.shadowedTokens = fields.shadowedTokens
    this.summaryTokens = fields.summaryTokens
    this.reason = fields.reason
    this.start = fields.start
    this.end = fields.end
  }
}
