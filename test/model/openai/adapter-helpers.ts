/**
 * Helpers of the OpenAI adapter end-to-end tests: requests, chunk collection with protocol
 * checks, and mock servers closed after each test.
 *
 * @module
 */
import { afterEach, expect } from 'vitest'
import {
  createAssembler,
  type ModelAdapter,
  type ModelRequest,
  type OpenAICompatibleOptions,
  openaiCompatible,
  type StreamChunk,
} from 'yoke'
import type { AssemblerOutcome } from '../../../src/model/index.js'
import { streamChunkSchema } from '../../../src/session/index.js'
import { type MockOpenAIServer, type MockOpenAIServerOptions, startMockOpenAIServer } from 'yoke/testing'

const servers: MockOpenAIServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** Starts a mock server that is closed after the test. */
export async function mockServer(
  script: MockOpenAIServerOptions['script'],
  options: Omit<MockOpenAIServerOptions, 'script'> = {},
): Promise<MockOpenAIServer> {
  const server = await startMockOpenAIServer({ script, ...options })
  servers.push(server)
  return server
}

/** `req(x)` of the acceptance scenarios: a valid request overlaid with `overlay`. */
export function req(overlay: Partial<ModelRequest> = {}): ModelRequest {
  return {
    provider: 'openai-compatible',
    model: 'gpt-test',
    messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
    metadata: { purpose: 'conversation' },
    signal: new AbortController().signal,
    ...overlay,
  }
}

/** `oa(x)` of the acceptance scenarios. */
export function oa(
  server: MockOpenAIServer,
  overlay: Partial<OpenAICompatibleOptions> = {},
): ReturnType<typeof openaiCompatible> {
  return openaiCompatible({ baseURL: server.baseURL, apiKey: 'test-key', model: 'gpt-test', ...overlay })
}

/**
 * Checks the chunk protocol: every chunk matches the schema and is JSON, block
 * indexes appear in order from 0, at most one usage, exactly one finish, last.
 */
export function expectProtocol(chunks: readonly StreamChunk[]): void {
  for (const chunk of chunks) {
    expect(streamChunkSchema.safeParse(chunk).success, JSON.stringify(chunk)).toBe(true)
    expect(JSON.parse(JSON.stringify(chunk))).toEqual(chunk)
  }
  expect(chunks.filter((chunk) => chunk.type === 'finish')).toHaveLength(1)
  expect(chunks.at(-1)?.type).toBe('finish')
  expect(chunks.filter((chunk) => chunk.type === 'usage').length).toBeLessThanOrEqual(1)
  const seen: number[] = []
  for (const chunk of chunks) {
    if (!('index' in chunk) || seen.includes(chunk.index)) continue
    expect(chunk.index).toBe(seen.length)
    seen.push(chunk.index)
  }
}

/** Every chunk of one `stream()` call, protocol-checked. */
export async function collect(adapter: ModelAdapter, request: ModelRequest): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of adapter.stream(request, { signal: request.signal })) chunks.push(chunk)
  expectProtocol(chunks)
  return chunks
}

/** The assembler's outcome of the chunks. */
export function assemble(chunks: readonly StreamChunk[]): AssemblerOutcome {
  const assembler = createAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler.outcome()
}

/** The failure of the stream's finish; throws when it has none. */
export function failureOf(
  chunks: readonly StreamChunk[],
): NonNullable<Extract<StreamChunk, { type: 'finish' }>['failure']> {
  const last = chunks.at(-1)
  if (last?.type !== 'finish' || last.failure === undefined)
    throw new Error(`expected a failed finish, got ${JSON.stringify(last)}`)
  return last.failure
}
