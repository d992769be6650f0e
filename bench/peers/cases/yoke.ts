/**
 * Yoke, from the built package (`../../dist`, what `npm run build` makes): one harness per process,
 * a fresh agent per conversation (`createAgent`, `dispose`). The fake model is a minimal
 * `ModelAdapter`: the lowest level Yoke calls a model at, the same chunks a real adapter yields
 * (a tool-call block or a text block, usage, finish). Everything above it (request building,
 * validation, the log, checkpoints, the tool scheduler) is the real loop.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import {
  type Agent,
  createHarness,
  defineTool,
  type HarnessOptions,
  jsonlPersistence,
  type Logger,
  type ModelAdapter,
  type ModelRequest,
  type StreamChunk,
} from '../../../dist/index.js'
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

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** Whether the last message of the request carries a tool result (then the model answers with text). */
function afterToolResult(request: ModelRequest): boolean {
  return request.messages.at(-1)?.content.some((block) => block.type === 'tool-result') === true
}

let calls = 0
const usage = { inputTokens: 10, outputTokens: 2 }

/** The two replies of a turn, as the chunks an adapter yields. */
export const fakeAdapter: ModelAdapter = {
  provider: 'fake',
  defaultModel: 'fake',
  async *stream(request: ModelRequest): AsyncIterable<StreamChunk> {
    if (afterToolResult(request)) {
      yield { type: 'text-delta', index: 0, text: ANSWER }
      yield { type: 'block-end', index: 0, block: { type: 'text', text: ANSWER } }
      yield { type: 'usage', usage }
      yield { type: 'finish', reason: 'stop' }
      return
    }
    const id = `call_${++calls}`
    yield { type: 'tool-call-delta', index: 0, id, name: TOOL_NAME, argumentsDelta: TOOL_ARGUMENTS }
    yield { type: 'block-end', index: 0, block: { type: 'tool-call', id, name: TOOL_NAME, arguments: TOOL_ARGUMENTS } }
    yield { type: 'usage', usage }
    yield { type: 'finish', reason: 'tool-calls' }
  },
}

/** The bench tool, as a Yoke tool. */
export const lookupTool = defineTool({
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  input: z.object({ query: z.string() }),
  execute: () => TOOL_ANSWER,
})

/** Where Yoke keeps its sessions in this case. */
export type YokeStore = 'memory' | 'jsonl'

/** Options of the Yoke case that are not the store. */
export interface YokeCaseOptions {
  /**
   * Extra harness options, merged last: how a new option (a durability mode, `persistence: false`)
   * is tried before the bench knows its final name.
   */
  readonly extra?: Record<string, unknown>
  /** Another model adapter (the streaming figure uses the OpenAI-compatible one). */
  readonly adapter?: ModelAdapter
  /** The answer every turn must end with (the streaming figure's server sends its own text). */
  readonly answer?: string
  /** Registers no tool (the streaming figure's step is a plain text answer, as in its peers). */
  readonly noTools?: boolean
}

/** Creates the Yoke runtime over memory or over JSONL files in a temp dir. */
export async function yokeRuntime(store: YokeStore, options: YokeCaseOptions = {}): Promise<Runtime> {
  const dir = store === 'jsonl' ? await mkdtemp(join(tmpdir(), 'yoke-peers-')) : undefined
  const harnessOptions = {
    model: options.adapter ?? fakeAdapter,
    tools: options.noTools === true ? [] : [lookupTool],
    logger: silent,
    ...(dir === undefined ? {} : { persistence: jsonlPersistence({ dir }) }),
    ...options.extra,
  } as HarnessOptions
  const harness = await createHarness(harnessOptions)
  return {
    async conversation(): Promise<Conversation> {
      const agent: Agent = await harness.createAgent()
      return {
        async turn(input) {
          const result = await agent.run(input)
          if (result.reason.kind !== 'completed') throw new Error(`yoke: turn ended ${JSON.stringify(result.reason)}`)
          expectAnswer('yoke', result.text, options.answer)
        },
        close: () => agent.dispose(),
      }
    },
    async close() {
      await harness.close()
      if (dir !== undefined) await rm(dir, { recursive: true, force: true })
    },
  }
}
