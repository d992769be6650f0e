/**
 * OpenAI Agents JS `run` with a `MemorySession` per conversation (the SDK's own session store). The
 * fake model implements the SDK's `Model` interface (`getResponse`), which is what its OpenAI
 * Responses and Chat Completions models implement: the runner, guardrail and tool machinery, the
 * session reads and writes all run as they do against a real model. Tracing is turned off (with no
 * API key it would only queue spans for an exporter that cannot send them).
 */
import {
  Agent,
  type AgentInputItem,
  MemorySession,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents'
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

let calls = 0

function lastItem(input: string | AgentInputItem[]): AgentInputItem | undefined {
  return typeof input === 'string' ? undefined : input.at(-1)
}

const model: Model = {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 2, totalTokens: 12 })
    if (lastItem(request.input)?.type === 'function_call_result')
      return {
        usage,
        output: [
          {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: ANSWER }],
          },
        ],
      }
    return {
      usage,
      output: [
        {
          type: 'function_call',
          callId: `call_${++calls}`,
          name: TOOL_NAME,
          arguments: TOOL_ARGUMENTS,
          status: 'completed',
        },
      ],
    }
  },
  // biome-ignore lint/correctness/useYield: the run case never streams
  async *getStreamedResponse() {
    throw new Error('the run case does not stream')
  },
}

/** One agent; a new `MemorySession` per conversation. */
export async function openaiAgentsRuntime(): Promise<Runtime> {
  setTracingDisabled(true)
  const agent = new Agent({
    name: 'bench',
    instructions: 'You answer questions.',
    model,
    tools: [
      tool({
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        parameters: z.object({ query: z.string() }),
        execute: async () => TOOL_ANSWER,
      }),
    ],
  })
  return {
    async conversation(): Promise<Conversation> {
      const session = new MemorySession()
      return {
        async turn(input) {
          const result = await run(agent, input, { session })
          expectAnswer('openai-agents', typeof result.finalOutput === 'string' ? result.finalOutput : undefined)
        },
        close: () => session.clearSession(),
      }
    },
    close: async () => {},
  }
}
