/**
 * The check of the call-level `providerOptions` an adapter sends with every call.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { JsonObject } from '../session/json-value.js'
import { isJsonValue } from '../session/snapshot/snapshot-json.js'

/** Call-level provider options: per provider id, a JSON object, e.g. `{ openai: { store: false } }`. */
export type AiSdkProviderOptionsValue = Readonly<Record<string, JsonObject>>

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Checks call-level provider options: an object of JSON objects, one per provider id.
 *
 * @param value - the options
 * @param argument - the argument name the error reports
 * @returns the options, or `undefined` when none were given
 * @throws `InvalidArgumentError` naming the provider entry that is not a JSON object
 * @internal
 */
export function checkProviderOptions(value: unknown, argument: string): AiSdkProviderOptionsValue | undefined {
  if (value === undefined) return undefined
  if (!isPlainObject(value)) {
    throw new InvalidArgumentError({ argument, reason: 'must be an object of JSON objects, one per provider', value })
  }
  for (const [provider, options] of Object.entries(value)) {
    if (!isPlainObject(options) || !isJsonValue(options)) {
      throw new InvalidArgumentError({
        argument: `${argument}.${provider}`,
        reason: 'must be a JSON object',
        value: options,
      })
    }
  }
  return value as AiSdkProviderOptionsValue
}
