import type { ModelInfo } from '../model/model-adapter.js'
import type { RequestContextData, RequestHeaderReason } from '../session/core-event-types.js'
import {
  type AdapterDefaults,
  type CallConfig,
  canonicalHeader,
  headerEquals,
  type RequestHeader,
  type ToolSchema,
} from '../session/request-header.js'

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
 * The header of a request (04-agent.md §12.2) in canonical form: `config`, then `adapterDefaults`
 * only with a marker, `system` only when non-empty, `tools` only when non-empty.
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
  })
}

/**
 * Whether a `request/header` is due before this request, and with which reason (04-agent.md
 * §12.2): always on the driver's first request (`initial` if the log has no header, else
 * `resume`), later only when the header differs from the folded one (`change`, by the session's
 * `headerEquals`). A later request over a log with no header logs `initial`.
 *
 * @param input - the folded header, whether this is the driver's first request, the new header
 * @returns the reason, or `undefined` when no header is due
 * @example
 * ```ts
 * const due = requestHeaderDecision({ folded: session.requestHeader(), firstRequestOfDriver, header })
 * if (due !== undefined) session.append('request/header', { header, reason: due.reason })
 * ```
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
 * Whether a `request/context` is due (04-agent.md T13): when none was logged, or when the provider,
 * model or context window differs from the last one.
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
