import { LlmError } from '../errors/llm-error.js'
import type { LlmFailure } from '../session/llm-failure.js'
import type { AdapterDefaults, CallConfig } from '../session/request-header.js'
import { modelFailure } from './failure-defaults.js'
import type { ModelInfo } from './model-adapter.js'

/** A call config with model defaults filled in, and which fields they are. */
export interface FilledCallConfig {
  /** The frozen config: the caller's fields, then the filled ones. */
  readonly config: CallConfig
  /** The filled fields; absent when none was filled. */
  readonly adapterDefaults?: AdapterDefaults
}

/**
 * The `UNSUPPORTED_REASONING_EFFORT` failure (`phase: 'pre-request'`, `detail: { field, value,
 * allowed }`) when the model lists its efforts and `effort` is not one of them.
 *
 * @param effort - the requested effort
 * @param info - the model's info, if any
 * @returns the failure, or `undefined` when the effort is allowed (or no list exists)
 * @internal
 */
export function effortFailure(effort: string, info: ModelInfo | undefined): LlmFailure | undefined {
  const listed: unknown = info?.reasoningEfforts
  if (!Array.isArray(listed)) return undefined
  const allowed = Object.freeze(listed.filter((item): item is string => typeof item === 'string'))
  if (allowed.includes(effort)) return undefined
  return modelFailure(
    'UNSUPPORTED_REASONING_EFFORT',
    `reasoning effort "${effort}" is not offered by this model (allowed: ${allowed.map((item) => `"${item}"`).join(', ') || 'none'})`,
    'pre-request',
    { detail: Object.freeze({ field: 'reasoningEffort', value: effort, allowed }) },
  )
}

/**
 * Fills `maxTokens` from `info.defaultMaxTokens` and `reasoningEffort` from
 * `info.defaultReasoningEffort` where a validated config lacks them (as
 * `prepareCall` does), then checks the effort against `info.reasoningEfforts`.
 *
 * @param config - a config that passed `validateCallConfig`
 * @param info - the routed model's info, if any
 * @returns the frozen config and the `adapterDefaults` markers
 * @throws {@link LlmError} `UNSUPPORTED_REASONING_EFFORT` (`detail.allowed`)
 * @internal
 */
export function fillModelDefaults(config: CallConfig, info: ModelInfo | undefined): FilledCallConfig {
  const filled: { -readonly [K in keyof CallConfig]: CallConfig[K] } = {
    provider: config.provider,
    model: config.model,
  }
  if (config.reasoningEffort !== undefined) filled.reasoningEffort = config.reasoningEffort
  if (config.temperature !== undefined) filled.temperature = config.temperature
  if (config.maxTokens !== undefined) filled.maxTokens = config.maxTokens
  if (config.stop !== undefined) filled.stop = Object.freeze([...config.stop])
  const markers: { -readonly [K in keyof AdapterDefaults]: AdapterDefaults[K] } = {}
  const defaultMaxTokens = info?.defaultMaxTokens
  if (filled.maxTokens === undefined && Number.isSafeInteger(defaultMaxTokens) && (defaultMaxTokens as number) > 0) {
    filled.maxTokens = defaultMaxTokens as number
    markers.maxTokens = true
  }
  const defaultEffort = info?.defaultReasoningEffort
  if (filled.reasoningEffort === undefined && typeof defaultEffort === 'string' && defaultEffort.length > 0) {
    filled.reasoningEffort = defaultEffort
    markers.reasoningEffort = true
  }
  if (filled.reasoningEffort !== undefined) {
    const failure = effortFailure(filled.reasoningEffort, info)
    if (failure !== undefined) throw new LlmError(failure)
  }
  const hasMarker = markers.maxTokens === true || markers.reasoningEffort === true
  return hasMarker
    ? { config: Object.freeze(filled), adapterDefaults: Object.freeze(markers) }
    : { config: Object.freeze(filled) }
}
