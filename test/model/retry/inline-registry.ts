/**
 * A minimal {@link ModelRegistry} for the `withRetry` tests: `stream` replays one chunk list per
 * call from a script (recording each request and scope); the other methods are not used and throw.
 *
 * @module
 */
import type { ModelRegistry, ModelRequest, StreamChunk } from 'yoke'
import type { ModelScopeOptions } from '../../../src/model/index.js'

/** A call the inline registry received. */
export interface InlineCall {
  readonly request: ModelRequest
  readonly options: ModelScopeOptions | undefined
}

/** The inline registry and what it saw. */
export interface InlineRegistry extends ModelRegistry {
  readonly calls: InlineCall[]
}

const unused = (name: string) => (): never => {
  throw new Error(`inline registry: ${name} is not used by withRetry`)
}

/** A registry whose `stream` yields `script[k]` on the k-th call (a `finish` error `SCRIPT_EXHAUSTED` past the end). */
export function inlineRegistry(script: readonly (readonly StreamChunk[])[]): InlineRegistry {
  const calls: InlineCall[] = []
  return {
    calls,
    register: unused('register'),
    describe: unused('describe'),
    providers: unused('providers'),
    prepareCall: unused('prepareCall'),
    stream(request, options) {
      const chunks = script[calls.length] ?? [
        {
          type: 'finish',
          reason: 'error',
          failure: { code: 'SCRIPT_EXHAUSTED', message: 'no chunks left', retryable: false, phase: 'pre-request' },
        },
      ]
      calls.push({ request, options })
      return (async function* () {
        yield* chunks
      })()
    },
  }
}

/** The chunks of a text reply. */
export function textChunks(text: string): readonly StreamChunk[] {
  return [
    { type: 'text-delta', index: 0, text },
    { type: 'block-end', index: 0, block: { type: 'text', text } },
    { type: 'usage', usage: { inputTokens: 3, outputTokens: 1 } },
    { type: 'finish', reason: 'stop' },
  ]
}

/** The chunks of a failed call. */
export function failureChunks(
  code: string,
  retryable: boolean,
  extra: { readonly retryAfterMs?: number } = {},
): readonly StreamChunk[] {
  return [
    {
      type: 'finish',
      reason: 'error',
      failure: { code, message: `failed ${code}`, retryable, phase: 'response', ...extra },
    },
  ]
}
