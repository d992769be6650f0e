import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** Where a session failure happened; every session error carries these. */
export interface SessionErrorLocation {
  /** The session concerned. */
  readonly sessionId?: string | undefined
  /** The event type concerned. */
  readonly type?: string | undefined
  /** The seq the candidate event would have had. */
  readonly seq?: number | undefined
  /** The position in a seed. */
  readonly index?: number | undefined
}

/** What every session error constructor takes: the location, the detail text and a cause. */
export interface SessionErrorOptions<C extends ErrorCode> extends SessionErrorLocation {
  /** The stable code. */
  readonly code: C
  /** What is wrong, naming the offending value; the location is prefixed to it. */
  readonly detail: string
  /** The underlying failure. */
  readonly cause?: unknown
}

function locationText(location: SessionErrorLocation): string {
  const parts: string[] = []
  if (location.sessionId !== undefined) parts.push(`session "${location.sessionId}"`)
  let event = location.type ?? ''
  if (location.index !== undefined) event += `${event === '' ? '' : ' '}at seed index ${location.index}`
  else if (location.seq !== undefined) event += `${event === '' ? '' : ' '}at seq ${location.seq}`
  if (event !== '') parts.push(event)
  return parts.join(': ')
}

/**
 * Base class of the session errors: a stable `code` and the location fields
 * `sessionId`, `type`, `seq` and `index`.
 */
export class SessionError<C extends ErrorCode = ErrorCode> extends HarnessError {
  static override readonly brand: string = 'SessionError'
  /** The stable code. */
  declare readonly code: C
  /** The session concerned. */
  readonly sessionId: string | undefined
  /** The event type concerned. */
  readonly type: string | undefined
  /** The seq the candidate event would have had. */
  readonly seq: number | undefined
  /** The position in a seed. */
  readonly index: number | undefined

  /** @param options - the code, the location, the detail text and a cause */
  constructor(options: SessionErrorOptions<C>) {
    const location = locationText(options)
    super(
      options.code,
      location === '' ? options.detail : `${location}: ${options.detail}`,
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.sessionId = options.sessionId
    this.type = options.type
    this.seq = options.seq
    this.index = options.index
  }
}
