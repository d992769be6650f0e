/**
 * The shape check of an AI SDK language model.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { AiSdkSpecificationVersion } from './ai-sdk-language-model.js'

const versions: ReadonlySet<string> = new Set<AiSdkSpecificationVersion>(['v2', 'v3', 'v4'])

/**
 * Reads a property without letting a throwing getter escape as anything but a refusal.
 *
 * @internal
 */
export function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/**
 * Checks an AI SDK language model by shape and returns its version; every refusal names what was
 * wrong.
 *
 * @param model - the value to check
 * @param argument - the argument name the error reports
 * @returns the specification version
 * @throws `InvalidArgumentError` for anything that is not a v2, v3 or v4 language model
 * @internal
 */
export function checkLanguageModel(model: unknown, argument = 'languageModel'): AiSdkSpecificationVersion {
  const refuse = (reason: string): never => {
    throw new InvalidArgumentError({ argument, reason, value: model })
  }
  if (typeof model !== 'object' || model === null) {
    return refuse(`expected an AI SDK language model, got ${describe(model)}`)
  }
  const version = read(model, 'specificationVersion')
  if (typeof version !== 'string' || !versions.has(version)) {
    return refuse(
      `unsupported specificationVersion ${typeof version === 'string' ? `"${version}"` : `(${describe(version)})`}: expected "v2", "v3" or "v4"`,
    )
  }
  if (typeof read(model, 'doStream') !== 'function') return refuse('it has no doStream method')
  for (const key of ['provider', 'modelId']) {
    const text = read(model, key)
    if (typeof text !== 'string' || text === '') refuse(`its ${key} is not a non-empty string`)
  }
  return version as AiSdkSpecificationVersion
}
