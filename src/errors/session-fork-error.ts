import type { ErrorCode } from './codes.js'
import { SessionError, type SessionErrorOptions } from './session-error.js'

/** The codes of {@link SessionForkError}. */
export type SessionForkErrorCode =
  | typeof ErrorCode.SESSION_EXISTS
  | typeof ErrorCode.SESSION_NOT_FOUND
  | typeof ErrorCode.INVALID_BOUNDARY
  | typeof ErrorCode.OPEN_TURN

/** The fields a {@link SessionForkError} may carry besides its location. */
export interface SessionForkErrorFields {
  /** For `INVALID_BOUNDARY`: the boundary asked for. */
  readonly at?: unknown | undefined
  /** For `INVALID_BOUNDARY`: the last seq of the source, `null` when it is empty. */
  readonly lastSeq?: number | null | undefined
  /** For `OPEN_TURN`: the open turn. */
  readonly turn?: number | undefined
  /** For `OPEN_TURN`: the seq before that turn started, `null` when it starts at seq 0. */
  readonly nearestBalancedSeq?: number | null | undefined
}

/** A fork was refused; nothing was created. */
export class SessionForkError extends SessionError<SessionForkErrorCode> {
  static override readonly brand: string = 'SessionForkError'
  /** For `INVALID_BOUNDARY`: the boundary asked for. */
  readonly at: unknown | undefined
  /** For `INVALID_BOUNDARY`: the last seq of the source, `null` when it is empty. */
  readonly lastSeq: number | null | undefined
  /** For `OPEN_TURN`: the open turn. */
  readonly turn: number | undefined
  /** For `OPEN_TURN`: the seq before that turn started, `null` when it starts at seq 0. */
  readonly nearestBalancedSeq: number | null | undefined

  /** @param options - the code, the location, the detail text, the fields and a cause */
  constructor(options: SessionErrorOptions<SessionForkErrorCode> & SessionForkErrorFields) {
    super(options)
    this.at = options.at
    this.lastSeq = options.lastSeq
    this.turn = options.turn
    this.nearestBalancedSeq = options.nearestBalancedSeq
  }
}
