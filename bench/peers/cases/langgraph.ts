/**
 * LangGraph JS: a hand-built `StateGraph` over `MessagesAnnotation` (a model node, a prebuilt
 * `ToolNode`, the tools condition), compiled with a `MemorySaver` checkpointer, one `thread_id` per
 * conversation (its checkpoints deleted at the conversation's end). The fake model is a
 * `BaseChatModel` subclass with `_generate` and `bindTools` (converting the tools to OpenAI tool
 * definitions and binding them, as the OpenAI chat model does), so the callbacks, message classes and
 * the graph's checkpointing of every step all run as they do against a real model.
 */
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base'
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from '@langchain/core/language_models/chat_models'
import { AIMessage, type AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages'
import type { ChatResult } from '@langchain/core/outputs'
import type { Runnable } from '@langchain/core/runnables'
import { tool } from '@langchain/core/tools'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph'
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt'
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

interface FakeCallOptions extends BaseChatModelCallOptions {
  readonly tools?: unknown[]
}

class FakeToolChatModel extends BaseChatModel<FakeCallOptions> {
  _llmType(): string {
    return 'fake'
  }

  override bindTools(tools: BindToolsInput[]): Runnable<BaseLanguageModelInput, AIMessageChunk, FakeCallOptions> {
    return this.withConfig({ tools: tools.map((entry) => convertToOpenAITool(entry)) })
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = ToolMessage.isInstance(messages.at(-1))
      ? new AIMessage(ANSWER)
      : new AIMessage({
          content: '',
          tool_calls: [{ id: `call_${++calls}`, name: TOOL_NAME, args: JSON.parse(TOOL_ARGUMENTS), type: 'tool_call' }],
        })
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] }
  }
}

/** The graph compiled once; a thread per conversation. */
export async function langGraphRuntime(): Promise<Runtime> {
  const lookup = tool(async () => TOOL_ANSWER, {
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    schema: z.object({ query: z.string() }),
  })
  const model = new FakeToolChatModel({}).bindTools([lookup])
  const checkpointer = new MemorySaver()
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode([lookup]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer })
  let threads = 0
  return {
    async conversation(): Promise<Conversation> {
      const threadId = `thread-${++threads}`
      const config = { configurable: { thread_id: threadId } }
      return {
        async turn(input) {
          const state = await graph.invoke({ messages: [new HumanMessage(input)] }, config)
          const last = state.messages.at(-1)
          expectAnswer('langgraph', typeof last?.content === 'string' ? last.content : undefined)
        },
        close: () => checkpointer.deleteThread(threadId),
      }
    },
    close: async () => {},
  }
}
