import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link SeqConflictError}. */
export type SeqConflictErrorCode = typeof ErrorCode.SEQ_CONFLICT

/** The fields a {@link SeqConflictError} may carry. */
export interface SeqConflictErrorFields {
  /** The seq the writer expected to write next. */
  readonly expectedSeq?: number | undefined
  /** The next seq in storage. */
  readonly storedSeq?: number | undefined
  /** The file size the writer expected. */
  readonly expectedBytes?: number | undefined
  /** The file size found. */
  readonly actualBytes?: number | undefined
  /** The revision a repair expected. */
  readonly expectedRevision?: string | undefined
}

/** The stored log is not where the writer expected it (another writer, or a changed file). */
export class SeqConflictError extends HarnessError {
  static override readonly brand: string = 'SeqConflictError'
  /** The stable code. */
  declare readonly code: SeqConflictErrorCode
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** The seq the writer expected to write next. */
  readonly expectedSeq: number | undefined
  /** The next seq in storage. */
  readonly storedSeq: number | undefined
  /** The file size the writer expected. */
  readonly expectedBytes: number | undefined
  /** The file size found. */
  readonly actualBytes: number | undefined
  /** The revision a repair expected. */
  readonly expectedRevision: string | undefined

  /** @param options - the code, the session, what is wrong (named in the message), the fields and a cause */
  constructor(
    options: {
      code: SeqConflictErrorCode
      sessionId?: string | undefined
      detail: string
      cause?: unknown
    } & SeqConflictErrorFields,
  ) {
    super(
      options.code,
      options.sessionId === undefined ? options.detail : `session "${options.sessionId}": ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.expectedSeq = options.expectedSeq
    this.storedSeq = options.storedSeq
    this.expectedBytes = options.expectedBytes
    this.actualBytes = options.actualBytes
    this.expectedRevision = options.expectedRevision
  }
}
