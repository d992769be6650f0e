import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link SurfaceError}. */
export type SurfaceErrorCode =
  | typeof ErrorCode.SURFACE_MARKER_REQUIRED
  | typeof ErrorCode.SURFACE_MARKER_FORBIDDEN
  | typeof ErrorCode.INVALID_SURFACE_OP
  | typeof ErrorCode.INVALID_SOURCES
  | typeof ErrorCode.REPLACE_NOT_FOUND
  | typeof ErrorCode.REPLACE_REVERSED
  | typeof ErrorCode.REPLACE_UNCOVERED
  | typeof ErrorCode.REPLACE_SPLITS_TOOL_PAIR
  | typeof ErrorCode.REWRITE_NOT_SINGLE
  | typeof ErrorCode.REWRITE_NOT_TOOL_RESULT
  | typeof ErrorCode.REWRITE_NOT_CONTENT_ONLY

/** The fields a {@link SurfaceError} may carry besides its location. */
export interface SurfaceErrorFields {
  /** The option concerned (`surfaceOp`, `sourceEventSeqs`). */
  readonly field?: string | undefined
  /** For `INVALID_SOURCES`: `not-array`, `empty`, `not-integer`, `duplicate` or `not-earlier`. */
  readonly reason?: string | undefined
  /** For `REPLACE_NOT_FOUND`: which end of the range is not a node. */
  readonly which?: 'start' | 'end' | undefined
  /** For `REPLACE_UNCOVERED`: the shadowed seqs not listed as sources. */
  readonly missing?: readonly number[] | undefined
  /** For `REPLACE_SPLITS_TOOL_PAIR`: the call that would be split. */
  readonly callId?: string | undefined
  /** For `REPLACE_SPLITS_TOOL_PAIR`: the assistant message node. */
  readonly assistantSeq?: number | undefined
  /** For `REPLACE_SPLITS_TOOL_PAIR`: the result node, when there is one. */
  readonly resultSeq?: number | undefined
  /** For `REWRITE_NOT_CONTENT_ONLY`: the first difference. */
  readonly path?: string | undefined
}

/** A surface marker, provenance list or replace is invalid. */
export class SurfaceError extends SessionError<SurfaceErrorCode> {
  static override readonly brand: string = 'SurfaceError'
  /** The option concerned (`surfaceOp`, `sourceEventSeqs`). */
  readonly field: string | undefined
  /** For `INVALID_SOURCES`: `not-array`, `empty`, `not-integer`, `duplicate` or `not-earlier`. */
  readonly reason: string | undefined
  /** For `REPLACE_NOT_FOUND`: which end of the range is not a node. */
  readonly which: 'start' | 'end' | undefined
  /** For `REPLACE_UNCOVERED`: the shadowed seqs not listed as sources. */
  readonly missing: readonly number[] | undefined
  /** For `REPLACE_SPLITS_TOOL_PAIR`: the call that would be split. */
  readonly callId: string | undefined
  /** For `REPLACE_SPLITS_TOOL_PAIR`: the assistant message node. */
  readonly assistantSeq: number | undefined
  /** For `REPLACE_SPLITS_TOOL_PAIR`: the result node, when there is one. */
  readonly resultSeq: number | undefined
  /** For `REWRITE_NOT_CONTENT_ONLY`: the first difference. */
  readonly path: string | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<SurfaceErrorCode> & SurfaceErrorFields) {
    super(options)
    this.field = options.field
    this.reason = options.reason
    this.which = options.which
    this.missing = options.missing === undefined ? undefined : Object.freeze([...options.missing])
    this.callId = options.callId
    this.assistantSeq = options.assistantSeq
    this.resultSeq = options.resultSeq
    this.path = options.path
  }
}
