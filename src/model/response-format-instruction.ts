/**
 * The instruction that gives a {@link ResponseFormat} to a model whose adapter has no wire field for
 * it, and the request carrying it.
 *
 * @module
 */
import type { ResponseFormat } from '../session/response-format.js'
import type { ModelRequest } from './model-request.js'

/**
 * The text that asks the model for JSON matching a {@link ResponseFormat}: a fixed sentence, then
 * the schema as compact JSON. Deterministic: the same format always gives the same text, so a
 * request rebuilt from the log gets the same system prompt.
 *
 * @param format - the response format
 * @returns the instruction text
 * @example
 * ```ts
 * responseFormatInstruction({ type: 'json', schema: { type: 'object' } })
 * // 'Answer with one JSON value and nothing else (no prose, no code fence). It must match this JSON Schema:\n{"type":"object"}'
 * ```
 */
export function responseFormatInstruction(format: ResponseFormat): string {
  return `Answer with one JSON value and nothing else (no prose, no code fence). It must match this JSON Schema:\n${JSON.stringify(format.schema)}`
}

/**
 * `system` with the {@link responseFormatInstruction} appended after a blank line (the instruction
 * alone when `system` is absent or empty).
 *
 * @param system - the system prompt
 * @param format - the response format
 * @returns the system prompt the model sees
 * @internal
 */
export function systemWithInstruction(system: string | undefined, format: ResponseFormat): string {
  const instruction = responseFormatInstruction(format)
  return system === undefined || system === '' ? instruction : `${system}\n\n${instruction}`
}

/**
 * The request an adapter without `supportsResponseFormat` receives: the same request with the
 * instruction appended to `system` (its `responseFormat` kept, for the record). A request without
 * `responseFormat` is returned as it is.
 *
 * @param request - a validated, frozen request
 * @returns the request to hand to the adapter, frozen
 * @internal
 */
export function withResponseFormatInstruction(request: ModelRequest): ModelRequest {
  const format = request.responseFormat
  if (format === undefined) return request
  return Object.freeze({ ...request, system: systemWithInstruction(request.system, format) })
}
