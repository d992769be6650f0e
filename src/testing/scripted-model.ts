import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { ScriptedModelError } from '../errors/scripted-model-error.js'
import { type Clock, systemClock } from '../kernel/host-services.js'
import { checkOptions, type OptionRule, optionRule } from '../kernel/option-issues.js'
import { isRetryableByDefault, modelFailure } from '../model/failure-defaults.js'
import type { ModelAdapter, ModelInfo, ModelStreamOptions } from '../model/model-adapter.js'
import type { ModelRequest } from '../model/model-request.js'
import { isProviderId } from '../model/validate-model-request.js'
import type { LlmFailure, LlmFailurePhase } from '../session/llm-failure.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { ScriptedReply } from './scripted-reply.js'

/**
 * One entry of a {@link scriptedModel} script: a reply, or a function of the request and the
 * entry's 0-based index that returns one. A function that throws or rejects makes the stream's
 * iterator reject with that value (the model registry normalizes it to a `finish` error,
 * so throwing an `LlmError` scripts that failure); it may honor `request.signal`, and an abort
 * while its promise is pending ends the stream as aborted.
 */
export type ScriptEntry =
  | ScriptedReply
  | ((request: ModelRequest, index: number) => ScriptedReply | Promise<ScriptedReply>)

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /**
   * The adapter's provider id.
   *
   * @default 'mock'
   */
  readonly provider?: string
  /**
   * The adapter's default model.
   *
   * @default 'mock'
   */
  readonly model?: string
  /** What `describeModel` returns, for any model id. */
  readonly info?: ModelInfo
  /**
   * The clock `delayMs` and `chunkDelayMs` wait on.
   *
   * @default the system clock (real timers)
   */
  readonly clock?: Clock
}

/** A {@link ModelAdapter} that replays a script, one entry per `stream()` call. */
export interface ScriptedModel extends ModelAdapter {
  /**
   * Every request received, in order, as the same objects: whole, so a test reads what the loop
   * asked for, e.g. `requests[2].toolChoice` (`'none'` on the last step a step limit allows) and
   * `requests[0].responseFormat` (a structured run's JSON Schema).
   */
  readonly requests: readonly ModelRequest[]
  /** How many entries are left. */
  readonly remaining: number
  /**
   * Checks that the script was used up exactly.
   *
   * @throws `ScriptedModelError` `SCRIPT_OVERRUN` (`overrun`) when a request found no entry,
   *   else `SCRIPT_INCOMPLETE` (`remaining`) when entries are left
   */
  assertComplete(): void
  /**
   * Describes any model.
   *
   * @param model - ignored
   * @returns the `info` option
   */
  describeModel(model: string): ModelInfo | undefined
}

/** The rules of `scriptedModel` options (factory options → `InvalidOptionsError`). */
const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  provider: (value) => (isProviderId(value) ? undefined : 'must be a provider id (^[a-z0-9][a-z0-9._-]{0,63}$)'),
  model: optionRule.nonEmptyString,
  info: (value) => (optionRule.plainObject(value) === undefined ? undefined : 'must be a ModelInfo object'),
  clock: (value) =>
    typeof (value as { readonly now?: unknown } | null)?.now === 'function' &&
    typeof (value as { readonly setTimer?: unknown }).setTimer === 'function'
      ? undefined
      : 'must be a Clock { now(), setTimer() }',
})

/**
 * Creates a scripted model: each `stream()` call consumes the next entry and emits its reasoning,
 * text and tool-call blocks (indexes from 0, in that order), then `usage`, then `finish`. Tool-call
 * ids default to `call_<k>`, `k` counting every tool call the script emits from 1. With no
 * `delayMs`/`chunkDelayMs` no timer is ever created. The request is recorded and the entry
 * consumed when `stream()` is called, before iteration. It declares `supportsResponseFormat`, so a
 * recorded request carries `toolChoice` and `responseFormat` exactly as the loop sent them.
 *
 * @param script - the entries, used in order
 * @param options - provider, model, info and clock
 * @returns the model
 * @throws `InvalidArgumentError` for a malformed reply entry (a function entry's reply is
 *   checked when it resolves, and rejects the iterator instead); `InvalidOptionsError` for bad
 *   options (an unknown key, a provider that is not a provider id, a non-object `info`, a clock
 *   without `now`)
 * @example
 * ```ts
 * const model = scriptedModel([tool('echo', { x: 1 }), text('done')])
 * const harness = await createHarness({ model })
 * // … run the agent …
 * model.assertComplete()
 * ```
 */
export function scriptedModel(script: readonly ScriptEntry[], options: ScriptedModelOptions = {}): ScriptedModel {
  if (!Array.isArray(script))
    throw new InvalidArgumentError({ argument: 'script', reason: 'must be an array', value: script })
  checkOptions(options, optionRules, '{ provider?, model?, info?, clock? }', 'scriptedModel options')
  const entries: readonly ScriptEntry[] = [...script]
  entries.forEach((entry, index) => {
    if (typeof entry !== 'function') checkReply(entry, `script[${index}]`)
  })
  const clock = options.clock ?? systemClock()
  const info = options.info
  const requests: ModelRequest[] = []
  let claimed = 0
  let overrun = 0
  let toolCalls = 0
  const nextCallNumber = (): number => ++toolCalls

  return {
    provider: options.provider ?? 'mock',
    defaultModel: options.model ?? 'mock',
    // The script stands in for the provider: it records responseFormat as sent, with no instruction added to system.
    supportsResponseFormat: true,
    get requests() {
      return requests
    },
    get remaining() {
      return entries.length - claimed
    },
    describeModel: () => info,
    assertComplete() {
      if (overrun > 0) throw new ScriptedModelError({ code: ErrorCode.SCRIPT_OVERRUN, overrun })
      const remaining = entries.length - claimed
      if (remaining > 0) throw new ScriptedModelError({ code: ErrorCode.SCRIPT_INCOMPLETE, remaining })
    },
    stream(request: ModelRequest, streamOptions: ModelStreamOptions): AsyncIterable<StreamChunk> {
      requests.push(request)
      const signal = streamOptions.signal
      const entry = entries[claimed]
      if (entry === undefined) {
        overrun++
        const failure = modelFailure(
          'SCRIPT_EXHAUSTED',
          `scripted model has no reply for request #${requests.length}`,
          'pre-request',
        )
        return emit({ chunks: [{ type: 'finish', reason: 'error', failure }], reply: {} }, clock, signal)
      }
      const index = claimed++
      if (typeof entry !== 'function') return emit(planReply(entry, nextCallNumber), clock, signal)
      return resolveThenEmit(() => entry(request, index), index, nextCallNumber, clock, signal)
    },
  }
}

interface Plan {
  readonly chunks: readonly StreamChunk[]
  readonly reply: ScriptedReply
}

async function* resolveThenEmit(
  call: () => ScriptedReply | Promise<ScriptedReply>,
  index: number,
  nextCallNumber: () => number,
  clock: Clock,
  signal: AbortSignal,
): AsyncGenerator<StreamChunk> {
  if (signal.aborted) {
    yield abortedFinish('response')
    return
  }
  const pending = Promise.resolve().then(call)
  const reply = await untilSettledOrAborted(pending, signal)
  if (reply === undefined) {
    yield abortedFinish('response')
    return
  }
  checkReply(reply.value, `reply of script[${index}]`)
  yield* emit(planReply(reply.value, nextCallNumber), clock, signal)
}

async function* emit(plan: Plan, clock: Clock, signal: AbortSignal): AsyncGenerator<StreamChunk> {
  const { chunks, reply } = plan
  let emitted = false
  for (const chunk of chunks) {
    const delayMs = emitted ? reply.chunkDelayMs : reply.delayMs
    if (signal.aborted || (delayMs !== undefined && delayMs > 0 && !(await sleep(clock, delayMs, signal)))) {
      yield abortedFinish(emitted ? 'streaming' : 'response')
      return
    }
    yield chunk
    emitted = true
  }
  if (reply.hang === true) {
    await untilAborted(signal)
    yield abortedFinish(emitted ? 'streaming' : 'response')
  }
}

function planReply(reply: ScriptedReply, nextCallNumber: () => number): Plan {
  if (reply.chunks !== undefined) return { chunks: reply.chunks, reply }
  const chunks: StreamChunk[] = []
  const hang = reply.hang === true
  let index = 0
  const textBlock = (blockType: 'reasoning' | 'text', text: string): void => {
    const blockIndex = index++
    chunks.push({ type: 'block-start', index: blockIndex, blockType })
    const type = blockType === 'text' ? 'text-delta' : 'reasoning-delta'
    for (const piece of pieces(text, reply.chunkSize)) chunks.push({ type, index: blockIndex, text: piece })
    if (!hang) chunks.push({ type: 'block-end', index: blockIndex, block: { type: blockType, text } })
  }
  if (reply.reasoning !== undefined) textBlock('reasoning', reply.reasoning)
  if (reply.text !== undefined) textBlock('text', reply.text)
  for (const call of reply.toolCalls ?? []) {
    const number = nextCallNumber()
    const blockIndex = index++
    const id = call.id ?? `call_${number}`
    const args =
      typeof call.arguments === 'string'
        ? call.arguments
        : call.arguments === undefined
          ? '{}'
          : JSON.stringify(call.arguments)
    chunks.push({ type: 'block-start', index: blockIndex, blockType: 'tool-call' })
    for (const piece of pieces(args, reply.chunkSize)) {
      chunks.push({ type: 'tool-call-delta', index: blockIndex, id, name: call.name, argumentsDelta: piece })
    }
    if (!hang)
      chunks.push({
        type: 'block-end',
        index: blockIndex,
        block: { type: 'tool-call', id, name: call.name, arguments: args },
      })
  }
  if (hang) return { chunks, reply }
  if (reply.usage !== undefined) chunks.push({ type: 'usage', usage: reply.usage })
  if (reply.failure !== undefined) {
    chunks.push({
      type: 'finish',
      reason: 'error',
      failure: scriptedFailure(reply.failure, index > 0 ? 'streaming' : 'response'),
    })
  } else {
    const toolCallsGiven = reply.toolCalls !== undefined && reply.toolCalls.length > 0
    chunks.push({ type: 'finish', reason: reply.finish ?? (toolCallsGiven ? 'tool-calls' : 'stop') })
  }
  return { chunks, reply }
}

/** Splits by code points (never inside a surrogate pair); one piece by default, none for ''. */
function pieces(text: string, chunkSize: number | undefined): string[] {
  if (text === '') return []
  if (chunkSize === undefined) return [text]
  const codePoints = Array.from(text)
  if (codePoints.length <= chunkSize) return [text]
  const result: string[] = []
  for (let start = 0; start < codePoints.length; start += chunkSize) {
    result.push(codePoints.slice(start, start + chunkSize).join(''))
  }
  return result
}

function scriptedFailure(given: Partial<LlmFailure> & { readonly code: string }, phase: LlmFailurePhase): LlmFailure {
  // Keys given as `undefined` are dropped: the failure is logged, so it must be lossless JSON.
  const defined = Object.fromEntries(
    Object.entries(given).filter(([, value]) => value !== undefined),
  ) as Partial<LlmFailure>
  return Object.freeze({
    code: given.code,
    message: `scripted failure ${given.code}`,
    retryable: isRetryableByDefault(given.code),
    phase,
    ...defined,
  })
}

function abortedFinish(phase: LlmFailurePhase): StreamChunk {
  return { type: 'finish', reason: 'aborted', failure: modelFailure('ABORTED', 'request aborted', phase) }
}

/** Resolves `true` after `delayMs` on `clock`, or `false` as soon as `signal` aborts. */
function sleep(clock: Clock, delayMs: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const onAbort = (): void => {
      cancel()
      resolve(false)
    }
    const cancel = clock.setTimer(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, delayMs)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
}

/** The settled value, or `undefined` when the signal aborts first; a rejection propagates. */
async function untilSettledOrAborted<T>(
  pending: Promise<T>,
  signal: AbortSignal,
): Promise<{ readonly value: T } | undefined> {
  // A reply that rejects after the abort won is dropped, not reported as unhandled.
  pending.catch(() => {})
  let onAbort: (() => void) | undefined
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined)
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([pending.then((value) => ({ value })), aborted])
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort)
  }
}

function checkReply(reply: unknown, where: string): asserts reply is ScriptedReply {
  const fail = (field: string, reason: string, value: unknown): never => {
    throw new InvalidArgumentError({ argument: field === '' ? where : `${where}.${field}`, reason, value })
  }
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply))
    return fail('', 'must be a ScriptedReply object', reply)
  const fields = reply as Record<string, unknown>
  for (const key of ['text', 'reasoning'] as const) {
    if (fields[key] !== undefined && typeof fields[key] !== 'string') fail(key, 'must be a string', fields[key])
  }
  for (const key of ['delayMs', 'chunkDelayMs'] as const) {
    const value = fields[key]
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
      fail(key, 'must be a finite, non-negative number', value)
    }
  }
  const chunkSize = fields['chunkSize']
  if (chunkSize !== undefined && (!Number.isSafeInteger(chunkSize) || (chunkSize as number) < 1)) {
    fail('chunkSize', 'must be a positive safe integer', chunkSize)
  }
  if (fields['finish'] !== undefined && !['stop', 'tool-calls', 'max-tokens'].includes(fields['finish'] as string)) {
    fail('finish', "must be 'stop', 'tool-calls' or 'max-tokens'", fields['finish'])
  }
  const failure = fields['failure'] as { code?: unknown } | undefined
  if (
    failure !== undefined &&
    (typeof failure !== 'object' || failure === null || typeof failure.code !== 'string' || failure.code === '')
  ) {
    fail('failure', 'must be an object with a non-empty code', failure)
  }
  if (fields['chunks'] !== undefined && !Array.isArray(fields['chunks']))
    fail('chunks', 'must be an array of chunks', fields['chunks'])
  const toolCalls = fields['toolCalls']
  if (toolCalls === undefined) return
  if (!Array.isArray(toolCalls)) return fail('toolCalls', 'must be an array', toolCalls)
  toolCalls.forEach((call: unknown, position) => {
    const {
      name,
      id,
      arguments: args,
    } = (typeof call === 'object' && call !== null ? call : {}) as Record<string, unknown>
    if (typeof name !== 'string' || name === '') fail(`toolCalls[${position}].name`, 'must be a non-empty string', name)
    if (id !== undefined && (typeof id !== 'string' || id === ''))
      fail(`toolCalls[${position}].id`, 'must be a non-empty string', id)
    if (
      args !== undefined &&
      typeof args !== 'string' &&
      (typeof args !== 'object' || args === null || Array.isArray(args))
    ) {
      fail(`toolCalls[${position}].arguments`, 'must be a string or a JSON object', args)
    }
  })
}
