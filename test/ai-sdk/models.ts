/**
 * Models for the `yoke/ai-sdk` tests: the AI SDK's own v3 mock (`ai` 6) and v2 mock (`ai` 5,
 * installed as `ai-v5`), and hand-built v2 and v4 models that follow their specification's types,
 * each answering a script of stream-part lists.
 *
 * @module
 */
import type { LanguageModelV2, LanguageModelV2CallOptions, LanguageModelV2StreamPart } from '@ai-sdk/provider'
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test'
import { MockLanguageModelV2, convertArrayToReadableStream as v2Stream } from 'ai-v5/test'

/** One scripted answer: the stream parts, or an error `doStream` throws. */
export type Answer = readonly unknown[] | { readonly throws: unknown }

/** A hand-built model: what it was called with, and how many answers are left. */
export interface ScriptedAiSdkModel {
  readonly specificationVersion: 'v2' | 'v3' | 'v4'
  readonly provider: string
  readonly modelId: string
  readonly supportedUrls: Record<string, RegExp[]>
  readonly calls: Record<string, unknown>[]
  doGenerate(): PromiseLike<never>
  doStream(options: never): PromiseLike<{ stream: ReadableStream<unknown> }>
}

/**
 * A model of `version` answering `answers` in order (v4 follows the v4 types: it is what `ai` 7
 * providers return; its stream parts and call options are the v3 ones plus `reasoning`).
 */
export function scriptedAiSdkModel(version: 'v2' | 'v4', answers: readonly Answer[]): ScriptedAiSdkModel {
  const queue = [...answers]
  const calls: Record<string, unknown>[] = []
  return {
    specificationVersion: version,
    provider: `hand.${version}`,
    modelId: `model-${version}`,
    supportedUrls: {},
    calls,
    doGenerate: () => Promise.reject(new Error('doGenerate is not used')),
    async doStream(options: never) {
      calls.push(options as Record<string, unknown>)
      const answer = queue.shift()
      if (answer === undefined) throw new Error('the script is exhausted')
      if ('throws' in answer) throw answer.throws
      return { stream: convertArrayToReadableStream([...answer]) }
    },
  }
}

/** The same script as the AI SDK's own `MockLanguageModelV3`. */
export function mockV3(answers: readonly (readonly unknown[])[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: answers.map((parts) => ({ stream: convertArrayToReadableStream([...parts]) as never })),
  })
}

/** The same script as the AI SDK's own `MockLanguageModelV2` (from `ai` 5). */
export function mockV2(answers: readonly (readonly unknown[])[]): MockLanguageModelV2 {
  return new MockLanguageModelV2({
    doStream: answers.map((parts) => ({ stream: v2Stream([...parts]) as never })),
  })
}

/** A v2 model typed as `LanguageModelV2`, so the v2 shapes below are checked by the compiler. */
export function typedV2(parts: readonly LanguageModelV2StreamPart[]): LanguageModelV2 & {
  readonly calls: LanguageModelV2CallOptions[]
} {
  const calls: LanguageModelV2CallOptions[] = []
  return {
    specificationVersion: 'v2',
    provider: 'typed.v2',
    modelId: 'typed',
    supportedUrls: {},
    calls,
    doGenerate: () => Promise.reject(new Error('unused')),
    async doStream(options) {
      calls.push(options)
      return { stream: convertArrayToReadableStream([...parts]) }
    },
  }
}

/** v3/v4 usage with every part. */
export const fullUsage = {
  inputTokens: { total: 100, noCache: 60, cacheRead: 30, cacheWrite: 10 },
  outputTokens: { total: 50, text: 20, reasoning: 30 },
  raw: { provider_said: 1 },
}

/** v2 usage with every part. */
export const v2Usage = {
  inputTokens: 100,
  outputTokens: 50,
  totalTokens: 150,
  reasoningTokens: 30,
  cachedInputTokens: 40,
}

/** A v3/v4 finish part. */
export function finish(unified: string, raw?: string, usage: unknown = fullUsage): Record<string, unknown> {
  return { type: 'finish', finishReason: { unified, raw }, usage }
}

/** A text answer of the given version's parts. */
export function textParts(text: string, version: 'v2' | 'v3' | 'v4' = 'v3'): unknown[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: text },
    { type: 'text-end', id: 't1' },
    version === 'v2' ? { type: 'finish', finishReason: 'stop', usage: v2Usage } : finish('stop', 'end_turn'),
  ]
}

/** A streamed tool call of the given version. */
export function toolParts(id: string, name: string, input: string, version: 'v2' | 'v3' | 'v4' = 'v3'): unknown[] {
  const half = Math.floor(input.length / 2)
  return [
    { type: 'tool-input-start', id, toolName: name },
    { type: 'tool-input-delta', id, delta: input.slice(0, half) },
    { type: 'tool-input-delta', id, delta: input.slice(half) },
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName: name, input },
    version === 'v2'
      ? { type: 'finish', finishReason: 'tool-calls', usage: v2Usage }
      : finish('tool-calls', 'tool_use'),
  ]
}
