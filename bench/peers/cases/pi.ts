/**
 * pi-agent-core's `Agent` (no persistence: the agent holds its messages in memory). The fake model
 * is its `streamFn` hook, the function every pi provider is reached through: it returns an
 * `AssistantMessageEventStream` with the events a provider pushes (start, the block's start and
 * end, done). A new `Agent` per conversation.
 */
import { Agent, type AgentTool, type StreamFn } from '@mariozechner/pi-agent-core'
import {
  type AssistantMessage,
  type Context,
  createAssistantMessageEventStream,
  type Model,
  Type,
} from '@mariozechner/pi-ai'
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

const model: Model<'openai-completions'> = {
  id: 'fake',
  name: 'fake',
  api: 'openai-completions',
  provider: 'fake',
  baseUrl: 'http://127.0.0.1:9',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128_000,
  maxTokens: 4_096,
}

let calls = 0

function message(content: AssistantMessage['content'], stopReason: AssistantMessage['stopReason']): AssistantMessage {
  return {
    role: 'assistant',
    content,
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: {
      input: 10,
      output: 2,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 12,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason,
    timestamp: Date.now(),
  }
}

const streamFn: StreamFn = (_model, context: Context) => {
  const stream = createAssistantMessageEventStream()
  const afterTool = context.messages.at(-1)?.role === 'toolResult'
  const final = afterTool
    ? message([{ type: 'text', text: ANSWER }], 'stop')
    : message(
        [{ type: 'toolCall', id: `call_${++calls}`, name: TOOL_NAME, arguments: JSON.parse(TOOL_ARGUMENTS) }],
        'toolUse',
      )
  const partial = message([], final.stopReason)
  stream.push({ type: 'start', partial })
  if (afterTool) {
    stream.push({ type: 'text_start', contentIndex: 0, partial })
    stream.push({ type: 'text_delta', contentIndex: 0, delta: ANSWER, partial })
    stream.push({ type: 'text_end', contentIndex: 0, content: ANSWER, partial })
    stream.push({ type: 'done', reason: 'stop', message: final })
  } else {
    const call = final.content[0]
    if (call?.type !== 'toolCall') throw new Error('unreachable')
    stream.push({ type: 'toolcall_start', contentIndex: 0, partial })
    stream.push({ type: 'toolcall_delta', contentIndex: 0, delta: TOOL_ARGUMENTS, partial })
    stream.push({ type: 'toolcall_end', contentIndex: 0, toolCall: call, partial })
    stream.push({ type: 'done', reason: 'toolUse', message: final })
  }
  return stream
}

const parameters = Type.Object({ query: Type.String() })
const lookup: AgentTool<typeof parameters> = {
  name: TOOL_NAME,
  label: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  parameters,
  execute: async () => ({ content: [{ type: 'text', text: TOOL_ANSWER }], details: undefined }),
}

/** A new pi `Agent` per conversation, the fake model behind `streamFn`. */
export async function piRuntime(): Promise<Runtime> {
  return {
    async conversation(): Promise<Conversation> {
      const agent = new Agent({
        initialState: { systemPrompt: 'You answer questions.', model, tools: [lookup], messages: [] },
        streamFn,
      })
      return {
        async turn(input) {
          await agent.prompt(input)
          const last = agent.state.messages.at(-1)
          const text =
            last?.role === 'assistant'
              ? last.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
              : undefined
          expectAnswer('pi', text)
        },
        close: async () => {},
      }
    },
    close: async () => {},
  }
}
