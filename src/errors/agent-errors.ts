import { causeOf } from './cause-of.js'
import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A user message input is malformed; nothing was queued or logged. */
export class InvalidMessageError extends HarnessError {
  static override readonly brand: string = 'InvalidMessageError'
  /** The offending field, e.g. `'content[0].text'`. */
  readonly field: string
  /** The offending value. */
  readonly value: unknown
  /** Why it is rejected, e.g. `'must be a string'`. */
  readonly reason: string

  /** @param options - the field (`''` for the input itself), the value and why */
  constructor(options: { field: string; value?: unknown; reason: string; cause?: unknown }) {
    super(
      ErrorCode.INVALID_MESSAGE,
      options.field === ''
        ? `invalid message: ${options.reason}`
        : `invalid message: ${options.field} ${options.reason}`,
      causeOf(options),
    )
    this.field = options.field
    this.value = options.value
    this.reason = options.reason
  }
}

/** A message id is already pending in the inbox, or (with `logged`) carried by a logged message; nothing changed. */
export class DuplicateMessageError extends HarnessError {
  static override readonly brand: string = 'DuplicateMessageError'
  /** The repeated id. */
  readonly messageId: string
  /** `true` when a message already in the session log carries it (not only a pending one). */
  readonly logged: boolean

  /** @param options - the id, and whether a logged message carries it */
  constructor(options: { messageId: string; logged?: boolean }) {
    super(
      ErrorCode.DUPLICATE_MESSAGE_ID,
      options.logged === true
        ? `message id "${options.messageId}" is already used by a message of the session`
        : `message id "${options.messageId}" is already pending in the inbox`,
    )
    this.messageId = options.messageId
    this.logged = options.logged === true
  }
}

/** The agent was disposed: nothing is queued. */
export class AgentDisposedError extends HarnessError {
  static override readonly brand: string = 'AgentDisposedError'
  /** The agent id. */
  readonly agentId: string
  /** The refused operation, e.g. `'send'`. */
  readonly operation: string

  /** @param options - the agent id and the refused operation */
  constructor(options: { agentId: string; operation: string }) {
    super(ErrorCode.AGENT_DISPOSED, `agent "${options.agentId}" is disposed: cannot ${options.operation}`)
    this.agentId = options.agentId
    this.operation = options.operation
  }
}

/** The agent is running or in maintenance. */
export class AgentBusyError extends HarnessError {
  static override readonly brand: string = 'AgentBusyError'
  /** The agent id. */
  readonly agentId: string
  /** What it is doing. */
  readonly phase: 'running' | 'maintenance'

  /** @param options - the agent id, its phase and the refused operation */
  constructor(options: { agentId: string; phase: 'running' | 'maintenance'; operation: string }) {
    super(ErrorCode.AGENT_BUSY, `agent "${options.agentId}" is ${options.phase}: cannot ${options.operation} now`)
    this.agentId = options.agentId
    this.phase = options.phase
  }
}

/** No provider or model for a request. */
export class MissingModelError extends HarnessError {
  static override readonly brand: string = 'MissingModelError'
  /** The missing fields. */
  readonly missing: readonly ('provider' | 'model')[]

  /** @param options - the missing fields */
  constructor(options: { missing: readonly ('provider' | 'model')[] }) {
    super(
      ErrorCode.MISSING_MODEL,
      `no ${options.missing.join(' or ')} for the model request: set it in AgentOptions (or the harness model route), or return it from an agent/request waterfall listener`,
    )
    this.missing = Object.freeze([...options.missing])
  }
}

/** A loop request differs from what the log rebuilds (`verifyReconstruction`). */
export class ReconstructionError extends HarnessError {
  static override readonly brand: string = 'ReconstructionError'
  /** The first difference, in `$.a[0].b` form (`$` for an unmarked or unfrozen request). */
  readonly path: string
  /** The rebuilt value at `path`. */
  readonly expected: unknown
  /** The live value at `path`. */
  readonly actual: unknown

  /** @param options - the path and the two values */
  constructor(options: { path: string; expected?: unknown; actual?: unknown; reason?: string }) {
    super(
      ErrorCode.RECONSTRUCTION_MISMATCH,
      `the request differs from its reconstruction at ${options.path}${options.reason === undefined ? '' : `: ${options.reason}`}`,
    )
    this.path = options.path
    this.expected = options.expected
    this.actual = options.actual
  }
}

/** The log holds no such request attempt. */
export class RequestNotFoundError extends HarnessError {
  static override readonly brand: string = 'RequestNotFoundError'
  /** The turn asked for. */
  readonly turn: number
  /** The step asked for. */
  readonly step: number
  /** The attempt asked for. */
  readonly attempt: number

  /** @param options - the turn, step and attempt */
  constructor(options: { turn: number; step: number; attempt: number }) {
    super(
      ErrorCode.REQUEST_NOT_FOUND,
      `no request attempt ${options.attempt} in turn ${options.turn}, step ${options.step}`,
    )
    this.turn = options.turn
    this.step = options.step
    this.attempt = options.attempt
  }
}

/** A live agent already drives the session. */
export class AgentExistsError extends HarnessError {
  static override readonly brand: string = 'AgentExistsError'
  /** The agent (= session) id. */
  readonly agentId: string

  /** @param options - the id */
  constructor(options: { agentId: string }) {
    super(ErrorCode.AGENT_EXISTS, `an agent with id "${options.agentId}" is already live`)
    this.agentId = options.agentId
  }
}

/** The agent's creation was aborted by the caller's signal; nothing was published. */
export class AgentCreationAbortedError extends HarnessError {
  static override readonly brand: string = 'AgentCreationAbortedError'
  /** The signal's reason. */
  readonly reason: unknown

  /** @param options - the signal's reason */
  constructor(options: { reason: unknown }) {
    super(ErrorCode.AGENT_CREATION_ABORTED, 'agent creation was aborted by the caller', { cause: options.reason })
    this.reason = options.reason
  }
}

/** Why a run's message was discarded. */
export type RunDiscardReason = 'canceled' | 'removed' | 'disposed'

/** No turn of the agent claimed the run's message. */
export class RunDiscardedError extends HarnessError {
  static override readonly brand: string = 'RunDiscardedError'
  /** Why. */
  readonly reason: RunDiscardReason
  /** The id of the run's message. */
  readonly messageId: string

  /** @param options - the reason, the message id and the cancel cause, if any */
  constructor(options: { reason: RunDiscardReason; messageId: string; cause?: unknown }) {
    super(
      ErrorCode.RUN_DISCARDED,
      `message "${options.messageId}" was ${options.reason} before a turn claimed it`,
      causeOf(options),
    )
    this.reason = options.reason
    this.messageId = options.messageId
  }
}

/** A stream consumer fell more than `highWaterMark` events behind. */
export class StreamOverflowError extends HarnessError {
  static override readonly brand: string = 'StreamOverflowError'
  /** The buffer limit. */
  readonly limit: number
  /** The seq of the last event the consumer received (`-1` when none). */
  readonly lastYieldedSeq: number

  /** @param options - the limit and the last delivered seq */
  constructor(options: { limit: number; lastYieldedSeq: number }) {
    super(
      ErrorCode.STREAM_OVERFLOW,
      `the stream consumer fell more than ${options.limit} events behind (last delivered seq ${options.lastYieldedSeq})`,
    )
    this.limit = options.limit
    this.lastYieldedSeq = options.lastYieldedSeq
  }
}
