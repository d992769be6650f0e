import { LlmError } from '../errors/llm-error.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { ModelInfo } from '../model/model-adapter.js'
import type { ModelRegistry, PreparedCall } from '../model/model-registry.js'
import type { ModelRequest } from '../model/model-request.js'
import { invalidRequestFailure } from '../model/validate-model-request.js'
import type { RequestContextData, RequestHeaderReason } from '../session/core-event-types.js'
import { deepFreeze } from '../session/deep-freeze.js'
import type { Message } from '../session/message.js'
import {
  type AdapterDefaults,
  type CallConfig,
  canonicalHeader,
  headerEquals,
  type RequestHeader,
  type ToolSchema,
} from '../session/request-header.js'
import type { ResponseFormat, ToolChoice } from '../session/response-format.js'
import type { Session } from '../session/session.js'
import {
  type CallConfigOptions,
  type CallConfigSeed,
  checkCallConfig,
  frozenCallConfig,
  resolveCallConfig,
} from './resolve-call-config.js'

/**
 * The loop-request marks of one harness: which request objects the agent loop built. Backed by a
 * `WeakSet`, owned by whoever creates it; there is no module state.
 */
export interface LoopRequestMarks {
  /**
   * Marks a request as loop-built.
   *
   * @param request - the frozen request
   */
  mark(request: object): void
  /**
   * Whether `value` is a request the loop built and marked (for `llm/stream` middleware).
   *
   * @param value - anything
   * @returns `true` for a marked request
   */
  isLoopRequest(value: unknown): boolean
}

/**
 * Creates an empty set of loop-request marks, one per harness.
 *
 * @returns the marks
 */
export function createLoopRequestMarks(): LoopRequestMarks {
  const marked = new WeakSet<object>()
  return {
    mark(request) {
      marked.add(request)
    },
    isLoopRequest(value) {
      return typeof value === 'object' && value !== null && marked.has(value)
    },
  }
}

/** What a request is built from: the folded header and the model history of a session's log. */
export type RequestLog = Pick<Session, 'id' | 'requestHeader' | 'deriveMessages'>

/** A loop request without its `signal`: what a log states. */
export type RequestBody = Omit<ModelRequest, 'signal'>

/**
 * The request a log states, without its signal: `{...header.config, system?, tools?, toolChoice?,
 * responseFormat?, messages, metadata}` from the folded header and `deriveMessages()`. The live loop and `rebuildRequest`
 * both build through this one function (the live loop over its session right after logging the
 * header, the rebuild over a replay of the log prefix), so a rebuilt request equals the live one
 * by construction.
 *
 * @param log - the live session, or a replay of a prefix of its log
 * @returns the request body, or `undefined` when the log holds no header
 */
export function requestFromLog(log: RequestLog): RequestBody | undefined {
  const header = log.requestHeader()
  return header === undefined ? undefined : loopRequestBody(header, log.deriveMessages(), log.id)
}

/** Input of {@link buildLoopRequest}. */
export interface BuildLoopRequestInput {
  /** The request's header (`system` and `tools` already omitted when empty). */
  readonly header: RequestHeader
  /** The model history: `session.deriveMessages()`. */
  readonly messages: readonly Message[]
  /** The session (= agent) id. */
  readonly sessionId: string
  /** The attempt's abort signal; neither frozen nor copied. */
  readonly signal: AbortSignal
  /** The harness's marks; the new request is added to them. */
  readonly marks: LoopRequestMarks
}

/**
 * Builds a loop request: `{...header.config, system?, tools?, toolChoice?, responseFormat?,
 * messages, metadata: {sessionId, purpose: 'conversation'}, signal}`, in that key order (an empty
 * `system` or `tools` and an `'auto'` tool choice are left out, as in the canonical header). The result is deep-frozen in place except the signal (freezing stops
 * at objects that are already frozen, such as logged messages) and marked in `marks`.
 *
 * @param input - the header, messages, session id, signal and the harness's marks
 * @returns the frozen, marked request
 */
export function buildLoopRequest(input: BuildLoopRequestInput): ModelRequest {
  return sealLoopRequest(loopRequestBody(input.header, input.messages, input.sessionId), input.signal, input.marks)
}

/** Adds the signal, deep-freezes everything else in place and marks the request. */
function sealLoopRequest(body: RequestBody, signal: AbortSignal, marks: LoopRequestMarks): ModelRequest {
  const request: ModelRequest = { ...body, signal }
  for (const [key, value] of Object.entries(request)) {
    if (key !== 'signal') deepFreeze(value)
  }
  Object.freeze(request)
  marks.mark(request)
  return request
}

/** A request body in loop-request key order; the object itself is not frozen (its `metadata` is). */
function loopRequestBody(header: RequestHeader, messages: readonly Message[], sessionId: string): RequestBody {
  return {
    ...header.config,
    ...(header.system === undefined || header.system === '' ? {} : { system: header.system }),
    ...(header.tools === undefined || header.tools.length === 0 ? {} : { tools: header.tools }),
    ...(header.toolChoice === undefined || header.toolChoice === 'auto' ? {} : { toolChoice: header.toolChoice }),
    ...(header.responseFormat === undefined ? {} : { responseFormat: header.responseFormat }),
    messages,
    metadata: Object.freeze({ sessionId, purpose: 'conversation' }),
  }
}

/** The parts of a request header, as the loop has them after `prepareCall` and prompt rendering. */
export interface RequestHeaderParts {
  /** The prepared call config (adapter defaults filled in). */
  readonly config: CallConfig
  /** Which config fields the adapter filled in. */
  readonly adapterDefaults?: AdapterDefaults | undefined
  /** The rendered system prompt; `''` or absent means none. */
  readonly system?: string | undefined
  /** The tools offered; empty or absent means none. */
  readonly tools?: readonly ToolSchema[] | undefined
  /** Which tools the model may call; kept only when tools are offered and it is not `'auto'`. */
  readonly toolChoice?: ToolChoice | undefined
  /** The JSON shape the answer must have. */
  readonly responseFormat?: ResponseFormat | undefined
}

/**
 * The header of a request in canonical form: `config`, then `adapterDefaults` only with a marker,
 * `system` only when non-empty, `tools` only when non-empty, `toolChoice` only with tools (a
 * choice among no tools means nothing, and providers refuse it) and not `'auto'`, then
 * `responseFormat` when set.
 *
 * @param parts - the config, markers, system prompt and tools
 * @returns a new header object; its sub-objects are the given ones, not copies
 */
export function buildRequestHeader(parts: RequestHeaderParts): RequestHeader {
  return canonicalHeader({
    config: parts.config,
    ...(parts.adapterDefaults === undefined ? {} : { adapterDefaults: parts.adapterDefaults }),
    ...(parts.system === undefined ? {} : { system: parts.system }),
    ...(parts.tools === undefined ? {} : { tools: parts.tools }),
    ...(parts.toolChoice === undefined || parts.tools === undefined || parts.tools.length === 0
      ? {}
      : { toolChoice: parts.toolChoice }),
    ...(parts.responseFormat === undefined ? {} : { responseFormat: parts.responseFormat }),
  })
}

/** Input of {@link requestHeaderDecision}. */
export interface RequestHeaderDecisionInput {
  /** The folded header of the log (`session.requestHeader()`), or `undefined` when none was logged. */
  readonly folded: RequestHeader | undefined
  /** Whether the driver has not logged a `request/header` yet. */
  readonly firstRequestOfDriver: boolean
  /** The header of this request ({@link buildRequestHeader}). */
  readonly header: RequestHeader
}

/** A due `request/header`: the reason to log it with. */
export interface RequestHeaderDue {
  /** `initial` when the log has no header, `resume` on a driver's first request over one, else `change`. */
  readonly reason: RequestHeaderReason
}

/**
 * Whether a `request/header` is due before this request, and with which reason: always on the
 * driver's first request (`initial` if the log has no header, else `resume`, so every process
 * restates what it sends), later only when the header differs from the folded one (`change`, by the
 * session's `headerEquals`). A later request over a log with no header logs `initial`.
 *
 * @param input - the folded header, whether this is the driver's first request, the new header
 * @returns the reason, or `undefined` when no header is due
 */
export function requestHeaderDecision(input: RequestHeaderDecisionInput): RequestHeaderDue | undefined {
  const { folded, header } = input
  if (folded === undefined) return { reason: 'initial' }
  if (input.firstRequestOfDriver) return { reason: 'resume' }
  return headerEquals(folded, header) ? undefined : { reason: 'change' }
}

/**
 * The `request/context` of a request: its route and, when the model reports one, its context window.
 *
 * @param config - the prepared call config
 * @param info - what the routed adapter says about the model, if anything
 * @returns `{ provider, model, contextWindow? }`
 */
export function buildRequestContext(config: CallConfig, info?: ModelInfo): RequestContextData {
  const contextWindow = info?.contextWindow
  return { provider: config.provider, model: config.model, ...(contextWindow === undefined ? {} : { contextWindow }) }
}

/**
 * Whether a `request/context` is due: when none was logged, or when the provider, model or context
 * window differs from the last one.
 *
 * @param folded - the last logged context (`session.requestContext()`)
 * @param context - the context of this request ({@link buildRequestContext})
 * @returns `true` when it must be appended
 */
export function requestContextDue(folded: RequestContextData | undefined, context: RequestContextData): boolean {
  return (
    folded === undefined ||
    folded.provider !== context.provider ||
    folded.model !== context.model ||
    folded.contextWindow !== context.contextWindow
  )
}

/** What {@link createRequestBuilder} needs from its agent. */
export interface RequestBuilderInit {
  /** The agent's session: headers and contexts are logged to it, requests built from it. */
  readonly session: Session
  /** The agent options: their call fields seed the driver's first request. */
  readonly options: CallConfigOptions
  /** The model registry that prepares each call. */
  readonly models: ModelRegistry
  /** The scope key routes are resolved from (the agent). */
  readonly scope: ScopeKey
  /** The harness's loop-request marks. */
  readonly marks: LoopRequestMarks
  /**
   * Checks each request just before the adapter receives it (the `verifyReconstruction` option);
   * a throw fails the attempt's stream and the adapter is not called.
   */
  readonly verify?: ((request: unknown, attempt: AttemptCoordinates) => void) | undefined
}

/** Which attempt of which step a request is. */
export interface AttemptCoordinates {
  /** The turn. */
  readonly turn: number
  /** The step within the turn. */
  readonly step: number
  /** The attempt within the step. */
  readonly attempt: number
}

/** One attempt's request, as the step asks for it once the `agent/request` waterfall chose a config. */
export interface RequestAttempt extends AttemptCoordinates {
  /** The `agent/request` waterfall's result; a listener may return anything, so it is checked here. */
  readonly chosen: Readonly<CallConfigSeed>
  /** The rendered system prompt of the step. */
  readonly system: string
  /** The tools offered in the step. */
  readonly tools: readonly ToolSchema[]
  /** Which tools the model may call in the step (`'none'` on the last step the limit allows). */
  readonly toolChoice?: ToolChoice | undefined
  /** The JSON shape the turn's answer must have (a run's `output`). */
  readonly responseFormat?: ResponseFormat | undefined
  /** The turn signal; the request carries it. */
  readonly signal: AbortSignal
}

/** A built request with the prepared call that streams it. */
export interface BuiltRequest {
  /** The call bound to its adapter. */
  readonly call: PreparedCall
  /** The frozen, marked request, as the log states it. */
  readonly request: ModelRequest
}

/**
 * The one place an agent's model requests are made. It owns the one piece of state the requests
 * need, whether the driver has logged a header yet, so no caller carries that flag.
 */
export interface RequestBuilder {
  /**
   * The seed call config of the next attempt, handed to the `agent/request` waterfall.
   *
   * @returns a fresh, deep-frozen seed
   */
  seed(): Readonly<CallConfigSeed>
  /**
   * Checks the chosen config, prepares the call, logs the `request/header` and `request/context`
   * that are due and builds the request from the log.
   *
   * @param attempt - the chosen config, the attempt's coordinates, system prompt, tools and signal
   * @returns the prepared call and its request
   * @throws {@link LlmError} for a chosen config that is not an object, `MissingModelError`, what
   *   `prepareCall` or an append throws
   */
  build(attempt: RequestAttempt): BuiltRequest
}

/**
 * Creates the request builder of one agent.
 *
 * @param init - the session, options, model registry, scope and marks
 * @returns the builder
 */
export function createRequestBuilder(init: RequestBuilderInit): RequestBuilder {
  const { session, options, models, scope, marks, verify } = init
  let firstRequestOfDriver = true
  return {
    seed() {
      return resolveCallConfig({ lastHeader: session.requestHeader(), options, firstRequestOfDriver })
    },
    build(attempt) {
      const { chosen } = attempt
      if (typeof chosen !== 'object' || chosen === null || Array.isArray(chosen)) {
        throw new LlmError(
          invalidRequestFailure({
            field: 'config',
            value: chosen,
            message: 'must be a call config object (the agent/request result)',
          }),
        )
      }
      const config = checkCallConfig(frozenCallConfig(chosen))
      const call = models.prepareCall(config, {
        scope,
        ...(verify === undefined
          ? {}
          : {
              beforeAdapter: (request: unknown) =>
                verify(request, { turn: attempt.turn, step: attempt.step, attempt: attempt.attempt }),
            }),
      })
      const header = buildRequestHeader({
        config: call.config,
        adapterDefaults: call.adapterDefaults,
        system: attempt.system,
        tools: attempt.tools,
        toolChoice: attempt.toolChoice,
        responseFormat: attempt.responseFormat,
      })
      const due = requestHeaderDecision({ folded: session.requestHeader(), firstRequestOfDriver, header })
      if (due !== undefined) session.append('request/header', { header, reason: due.reason })
      firstRequestOfDriver = false
      const context = buildRequestContext(call.config, call.info)
      if (requestContextDue(session.requestContext(), context)) session.append('request/context', context)
      // The header was just logged or equals the folded one, so the log states the request.
      const body = requestFromLog(session) as RequestBody
      return { call, request: sealLoopRequest(body, attempt.signal, marks) }
    },
  }
}
