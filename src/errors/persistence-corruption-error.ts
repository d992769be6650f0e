import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link PersistenceCorruptionError}. */
export type PersistenceCorruptionErrorCode =
  | typeof ErrorCode.CORRUPT_HEADER
  | typeof ErrorCode.CORRUPT_LOG
  | typeof ErrorCode.SEQ_MISMATCH
  | typeof ErrorCode.IDENTITY_MISMATCH
  | typeof ErrorCode.INVALID_EVENT
  | typeof ErrorCode.DUPLICATE_LOG
  | typeof ErrorCode.REPAIR_INCOMPLETE

/** The fields a {@link PersistenceCorruptionError} may carry. */
export interface PersistenceCorruptionErrorFields {
  /** Where the log is: a file path or `<table>:<id>`. */
  readonly location?: string | undefined
  /** The byte offset of the defect (or of its frame). */
  readonly offset?: number | undefined
  /** The 1-based line of the defect in the decoded text. */
  readonly line?: number | undefined
  /** The seq concerned. */
  readonly seq?: number | undefined
  /** What kind of defect was found. */
  readonly defect?: 'unterminated' | 'unparsable' | 'nul' | 'frame' | undefined
  /** What was expected (a seq, an id). */
  readonly expected?: unknown | undefined
  /** What was found. */
  readonly actual?: unknown | undefined
}

/** A stored log or header is damaged; nothing was changed. */
export class PersistenceCorruptionError extends HarnessError {
  static override readonly brand: string = 'PersistenceCorruptionError'
  /** The stable code. */
  declare readonly code: PersistenceCorruptionErrorCode
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** Where the log is: a file path or `<table>:<id>`. */
  readonly location: string | undefined
  /** The byte offset of the defect (or of its frame). */
  readonly offset: number | undefined
  /** The 1-based line of the defect in the decoded text. */
  readonly line: number | undefined
  /** The seq concerned. */
  readonly seq: number | undefined
  /** What kind of defect was found. */
  readonly defect: 'unterminated' | 'unparsable' | 'nul' | 'frame' | undefined
  /** What was expected (a seq, an id). */
  readonly expected: unknown | undefined
  /** What was found. */
  readonly actual: unknown | undefined

  /** @param options - the code, the session, what is wrong (named in the message), the fields and a cause */
  constructor(
    options: {
      code: PersistenceCorruptionErrorCode
      sessionId?: string | undefined
      detail: string
      cause?: unknown
    } & PersistenceCorruptionErrorFields,
  ) {
    super(
      options.code,
      options.sessionId === undefined ? options.detail : `session "${options.sessionId}": ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.location = options.location
    this.offset = options.offset
    this.line = options.line
    this.seq = options.seq
    this.defect = options.defect
    this.expected = options.expected
    this.actual = options.actual
  }
}
