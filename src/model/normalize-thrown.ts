import { HarnessError } from '../errors/harness-error.js'
import { LlmError } from '../errors/llm-error.js'
import type { LlmFailure, LlmFailurePhase } from '../session/llm-failure.js'
import { isJsonValue, snapshotJson } from '../session/snapshot/snapshot-json.js'
import type { FinishChunk } from '../session/stream-chunk.js'
import { type ModelFailureFields, modelFailure } from './failure-defaults.js'

/** What {@link normalizeThrown} needs to know about the call that threw. */
export interface ThrownContext {
  /** The request's signal: when it is aborted, any thrown value means the caller aborted. */
  readonly signal: AbortSignal
  /** Whether a chunk was already forwarded to the consumer (decides the default `phase`). */
  readonly streamed: boolean
}

const phases: ReadonlySet<unknown> = new Set<LlmFailurePhase>(['pre-request', 'connect', 'response', 'streaming'])
const unprintable = '(unprintable thrown value)'

/** An own data property of `value`, never a getter's result. */
function ownData(value: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(value, key)
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined
}

/** The native `message` getter of `DOMException` (an abort or timeout error): safe to call, unlike a user getter. */
const domExceptionMessage = Object.getOwnPropertyDescriptor(DOMException.prototype, 'message')?.get

function messageOfThrown(value: unknown): string {
  if (value instanceof DOMException && domExceptionMessage !== undefined) {
    const message: unknown = domExceptionMessage.call(value)
    return typeof message === 'string' ? message : unprintable
  }
  if (value instanceof Error) {
    const message = ownData(value, 'message')
    return typeof message === 'string' ? message : unprintable
  }
  try {
    return String(value)
  } catch {
    return unprintable
  }
}

function isAbortError(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ownOrInherited(value, 'name') === 'AbortError'
}

function ownOrInherited(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

/**
 * Rebuilds a failure from an `LlmError` field by field, keeping only valid, lossless-JSON fields,
 * so the `finish` chunk it goes into is always a valid chunk.
 */
function cleanFailure(failure: LlmFailure, phase: LlmFailurePhase): LlmFailure {
  const code = typeof failure.code === 'string' && failure.code.length > 0 ? failure.code : 'UNKNOWN'
  const message = typeof failure.message === 'string' ? failure.message : ''
  const fields: { -readonly [K in keyof ModelFailureFields]: ModelFailureFields[K] } = {
    retryable: failure.retryable === true,
  }
  if (Number.isInteger(failure.status) && (failure.status as number) >= 100 && (failure.status as number) <= 599) {
    fields.status = failure.status as number
  }
  if (Number.isSafeInteger(failure.retryAfterMs) && (failure.retryAfterMs as number) > 0)
    fields.retryAfterMs = failure.retryAfterMs as number
  if (typeof failure.requestId === 'string') fields.requestId = failure.requestId
  try {
    if (failure.detail !== undefined && isJsonValue(failure.detail)) fields.detail = snapshotJson(failure.detail)
  } catch {
    // A detail that cannot be read is dropped.
  }
  return modelFailure(code, message, phases.has(failure.phase) ? (failure.phase as LlmFailurePhase) : phase, fields)
}

/**
 * Normalizes a value an adapter threw (or its iterator rejected with) into the `finish` chunk the
 * consumer receives, in order: the request signal is aborted → `finish aborted`
 * `ABORTED`; a thrown `AbortError` while the signal is not aborted → `finish error` `ABORTED`; an
 * `LlmError` → its failure; another `HarnessError` → `{ code, message }`; anything else → `UNKNOWN`
 * with the error's own `message` data property (a `DOMException`'s native message), `String(value)` for a non-Error, or
 * `'(unprintable thrown value)'`. `retryable` is `false` unless the failure says otherwise; `phase`
 * (unless the failure has one) is `'streaming'` once a chunk was forwarded, else `'connect'`.
 *
 * @param value - what was thrown
 * @param context - the request signal and whether a chunk was forwarded
 * @returns a frozen `finish` chunk with reason `error` or `aborted`
 */
export function normalizeThrown(value: unknown, context: ThrownContext): FinishChunk {
  const phase: LlmFailurePhase = context.streamed ? 'streaming' : 'connect'
  if (context.signal.aborted) {
    const failure = modelFailure('ABORTED', 'the request was aborted', phase, { retryable: false })
    return Object.freeze({ type: 'finish', reason: 'aborted', failure })
  }
  let failure: LlmFailure
  if (LlmError.is(value)) {
    failure = cleanFailure(value.failure, phase)
  } else if (isAbortError(value)) {
    failure = modelFailure('ABORTED', `the adapter aborted: ${messageOfThrown(value)}`, phase, { retryable: false })
  } else if (HarnessError.is(value)) {
    failure = modelFailure(value.code, messageOfThrown(value), phase, { retryable: false })
  } else {
    failure = modelFailure('UNKNOWN', messageOfThrown(value), phase, { retryable: false })
  }
  return Object.freeze({ type: 'finish', reason: 'error', failure })
}
