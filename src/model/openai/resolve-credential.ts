/**
 * Per-request API key resolution and redaction.
 *
 * @module
 */
import type { LlmFailure } from '../../session/llm-failure.js'
import { modelFailure } from '../failure-defaults.js'
import type { CredentialSource } from './openai-options.js'

/**
 * What resolving a credential gave: the trimmed key (`undefined` when none is configured) or a
 * pre-request failure.
 *
 * @internal
 */
export type CredentialResolution =
  | { readonly ok: true; readonly key: string | undefined }
  | { readonly ok: false; readonly failure: LlmFailure }

const headerSafeKey = /^[\x21-\x7e]+$/

function describeSource(source: CredentialSource): string {
  if (source.kind === 'env') return `environment variable ${source.name}`
  if (source.kind === 'value' && typeof source.apiKey === 'function') return 'the apiKey function'
  return 'the apiKey option'
}

function missing(source: CredentialSource, why: string): CredentialResolution {
  return {
    ok: false,
    failure: modelFailure('MISSING_CREDENTIAL', `no API key: ${why}`, 'pre-request', {
      detail: { reference: describeSource(source) },
    }),
  }
}

/**
 * Resolves the API key for one request, never caching it: a string, a function (awaited), or
 * `process.env[name]` read now. The key is trimmed; a missing or empty key is `MISSING_CREDENTIAL`
 * naming the reference, a function that throws or rejects is `MISSING_CREDENTIAL` without the
 * cause's text, and a key that is not printable ASCII without spaces is `INVALID_CREDENTIAL`.
 * Never throws.
 *
 * @internal
 */
export async function resolveCredential(source: CredentialSource): Promise<CredentialResolution> {
  if (source.kind === 'none') return { ok: true, key: undefined }
  let raw: unknown
  if (source.kind === 'env') {
    raw = process.env[source.name]
    if (raw === undefined) return missing(source, `environment variable ${source.name} is not set`)
  } else if (typeof source.apiKey === 'function') {
    try {
      raw = await source.apiKey()
    } catch {
      return missing(source, 'the apiKey function failed')
    }
    if (typeof raw !== 'string') return missing(source, 'the apiKey function did not return a string')
  } else {
    raw = source.apiKey
  }
  const key = typeof raw === 'string' ? raw.trim() : ''
  if (key === '') return missing(source, `${describeSource(source)} is empty`)
  if (!headerSafeKey.test(key)) {
    return {
      ok: false,
      failure: modelFailure(
        'INVALID_CREDENTIAL',
        `the API key from ${describeSource(source)} is not header-safe (printable ASCII without spaces)`,
        'pre-request',
        { detail: { reference: describeSource(source) } },
      ),
    }
  }
  return { ok: true, key }
}

/**
 * Replaces every occurrence of `key` in `text` (plain and JSON-escaped) with `[redacted]`.
 *
 * @internal
 */
export function redactText(text: string, key: string | undefined): string {
  if (key === undefined || key === '') return text
  let result = text.split(key).join('[redacted]')
  const escaped = JSON.stringify(key).slice(1, -1)
  if (escaped !== key) result = result.split(escaped).join('[redacted]')
  return result
}

/**
 * A deep copy of a parsed JSON value with `key` redacted from every string (keys included).
 *
 * @internal
 */
export function redactJson(value: unknown, key: string | undefined): unknown {
  if (key === undefined || key === '') return value
  if (typeof value === 'string') return redactText(value, key)
  if (Array.isArray(value)) return value.map((item) => redactJson(item, key))
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = {}
    for (const [name, item] of Object.entries(value)) {
      Object.defineProperty(copy, redactText(name, key), {
        value: redactJson(item, key),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return copy
  }
  return value
}
