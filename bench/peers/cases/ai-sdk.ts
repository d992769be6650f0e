/**
 * AI SDK 6 `generateText`, the caller keeping the messages (the SDK has no session store). The fake
 * model is a `LanguageModelV3` object: the interface every AI SDK provider implements, so the whole
 * of `generateText` (prompt standardization and conversion, tool input parsing and validation, the
 * step loop) runs as it does against a real provider.
 */
import type { LanguageModelV3, LanguageModelV3GenerateResult } from '@ai-sdk/provider'
import { generateText, type ModelMessage, stepCountIs, tool } from 'ai'
import { z } from 'zod'
import {
  ANSWER,
  type Conversation,
  expectAnswer,
  type Runtime,
  TOOL_ANSWER,
  TOOL_ARGUMENTS,
  TOOL_DESCRIPTION,
  TOOL_NAME,
} from './case.js'

const usage: LanguageModelV3GenerateResult['usage'] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
}

let calls = 0

const model: LanguageModelV3 = {
  specificationVersion: 'v3',
  provider: 'fake',
  modelId: 'fake',
  supportedUrls: {},
  async doGenerate(options) {
    if (options.prompt.at(-1)?.role === 'tool')
      return {
        content: [{ type: 'text', text: ANSWER }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      }
    return {
      content: [{ type: 'tool-call', toolCallId: `call_${++calls}`, toolName: TOOL_NAME, input: TOOL_ARGUMENTS }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    }
  },
  doStream() {
    throw new Error('the generateText case does not stream')
  },
}

const tools = {
  [TOOL_NAME]: tool({
    description: TOOL_DESCRIPTION,
    inputSchema: z.object({ query: z.string() }),
    execute: async () => TOOL_ANSWER,
  }),
}

/** `generateText` with the caller's message list per conversation. */
export async function aiSdkRuntime(): Promise<Runtime> {
  return {
    async conversation(): Promise<Conversation> {
      const messages: ModelMessage[] = []
      return {
        async turn(input) {
          messages.push({ role: 'user', content: input })
          const result = await generateText({ model, messages, tools, stopWhen: stepCountIs(2) })
          messages.push(...result.response.messages)
          expectAnswer('ai-sdk', result.text)
        },
        close: async () => {},
      }
    },
    close: async () => {},
  }
}
