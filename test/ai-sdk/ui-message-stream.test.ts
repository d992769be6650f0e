/**
 * The UI message stream chunk by chunk: the exact chunks a turn gives, each accepted by the AI SDK's
 * own schema and reader; resuming after any frame id (stored or live over loopback HTTP) gives the
 * rest exactly once; the options; and the bad input (options, `Last-Event-ID`, sources).
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import { parseJsonEventStream, readUIMessageStream, type UIMessage, uiMessageChunkSchema } from 'ai'
import { createParser } from 'eventsource-parser'
import { describe, expect, test } from 'vitest'
import { type Agent, createHarness, type Harness, InvalidArgumentError, writeResponse } from 'yoke'
import { fail, type ScriptedReply, scriptedModel, text } from 'yoke/testing'
import {
  type UIMessageChunk,
  type UIMessageSessionResponseOptions,
  uiMessageStream,
  uiMessageStreamResponse,
} from '../../src/ai-sdk/index.js'
import { gate, until } from '../helpers/gates.js'
import { listenOnLoopback } from '../helpers/loopback.js'
import { heldWeatherTool, useCleanups, weatherTool } from './fixtures.js'

const cleanups = useCleanups()

async function harnessWith(replies: readonly ScriptedReply[], tools = [weatherTool]): Promise<Harness> {
  const harness = await createHarness({
    model: { adapter: scriptedModel(replies), retry: { initialDelayMs: 1 } },
    tools,
  })
  cleanups.push(() => harness.close())
  return harness
}

/** One SSE frame as sent. */
interface Frame {
  readonly id: string | undefined
  readonly data: string
}

async function framesOf(response: Response): Promise<Frame[]> {
  const frames: Frame[] = []
  const parser = createParser({ onEvent: (event) => frames.push({ id: event.id, data: event.data }) })
  const decoder = new TextDecoder()
  for await (const bytes of response.body ?? []) parser.feed(decoder.decode(bytes, { stream: true }))
  return frames
}

async function collect<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of stream) out.push(item)
  return out
}

/** The chunks of a response, each checked by the AI SDK's own chunk schema. */
async function checkedChunks(response: Response): Promise<unknown[]> {
  if (response.body === null) throw new Error('no body')
  const results = await collect(parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema }))
  return results.map((result) => {
    if (!result.success) throw result.error
    return result.value
  })
}

async function lastMessage(chunks: readonly UIMessageChunk[]): Promise<UIMessage | undefined> {
  let message: UIMessage | undefined
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk)
      controller.close()
    },
  })
  for await (const snapshot of readUIMessageStream({ stream: stream as never, terminateOnError: true }))
    message = snapshot
  return message
}

const toolTurn: ScriptedReply = {
  reasoning: 'Think.',
  text: 'Checking.',
  toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Paris' } }],
  chunkSize: 5,
}

describe('a turn as chunks', () => {
  test('a turn with reasoning, text and a tool call gives exactly these chunks, framed as protocol v1', async () => {
    const harness = await harnessWith([toolTurn, text('Sunny.')])
    const agent = await harness.createAgent()
    const response = uiMessageStreamResponse(agent.stream('Weather?'), { heartbeatMs: 0 })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    const frames = await framesOf(response.clone())
    expect(frames.at(-1)).toEqual({ id: undefined, data: '[DONE]' })
    expect(frames.slice(0, -1).every((frame) => frame.id !== undefined && /^\d+(\.\d+)?$/.test(frame.id))).toBe(true)
    const chunks = await checkedChunks(response)
    expect(chunks).toEqual([
      { type: 'start', messageId: `${agent.id}:turn-1` },
      { type: 'start-step' },
      { type: 'reasoning-start', id: 'reasoning-1-0' },
      { type: 'reasoning-delta', id: 'reasoning-1-0', delta: 'Think' },
      { type: 'reasoning-delta', id: 'reasoning-1-0', delta: '.' },
      { type: 'reasoning-end', id: 'reasoning-1-0' },
      { type: 'text-start', id: 'text-1-1' },
      { type: 'text-delta', id: 'text-1-1', delta: 'Check' },
      { type: 'text-delta', id: 'text-1-1', delta: 'ing.' },
      { type: 'text-end', id: 'text-1-1' },
      { type: 'tool-input-start', toolCallId: 'call_1', toolName: 'weather' },
      { type: 'tool-input-delta', toolCallId: 'call_1', inputTextDelta: '{"cit' },
      { type: 'tool-input-delta', toolCallId: 'call_1', inputTextDelta: 'y":"P' },
      { type: 'tool-input-delta', toolCallId: 'call_1', inputTextDelta: 'aris"' },
      { type: 'tool-input-delta', toolCallId: 'call_1', inputTextDelta: '}' },
      { type: 'tool-input-available', toolCallId: 'call_1', toolName: 'weather', input: { city: 'Paris' } },
      { type: 'tool-output-available', toolCallId: 'call_1', output: 'sunny in Paris' },
      { type: 'finish-step' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-2-0' },
      { type: 'text-delta', id: 'text-2-0', delta: 'Sunny.' },
      { type: 'text-end', id: 'text-2-0' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ])
  })

  test('uiMessageStream gives the same chunks as objects, which readUIMessageStream turns into the message', async () => {
    const harness = await harnessWith([toolTurn, text('Sunny.')])
    const agent = await harness.createAgent()
    const chunks = await collect(uiMessageStream(agent.stream('Weather?')))
    expect(chunks).toHaveLength(24)
    const message = await lastMessage(chunks)
    expect(message?.id).toBe(`${agent.id}:turn-1`)
    expect(message?.parts.map((part) => part.type)).toEqual([
      'step-start',
      'reasoning',
      'text',
      'tool-weather',
      'step-start',
      'text',
    ])
    expect(message?.parts[3]).toMatchObject({
      state: 'output-available',
      input: { city: 'Paris' },
      output: 'sunny in Paris',
    })
  })

  test('options: no reasoning, dynamic tool parts, own message ids and tool outputs', async () => {
    const harness = await harnessWith([toolTurn, text('Sunny.')])
    const agent = await harness.createAgent()
    const chunks = await collect(
      uiMessageStream(agent.stream('Weather?'), {
        sendReasoning: false,
        dynamicTools: true,
        messageId: ({ sessionId, turn }) => `m-${sessionId.length}-${turn}`,
        toolOutput: (result) => ({
          text: result.message.content[0].content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
        }),
      }),
    )
    expect(chunks[0]).toEqual({ type: 'start', messageId: `m-${agent.id.length}-1` })
    expect(chunks.some((chunk) => chunk.type.startsWith('reasoning'))).toBe(false)
    expect(chunks).toContainEqual({
      type: 'tool-input-start',
      toolCallId: 'call_1',
      toolName: 'weather',
      dynamic: true,
    })
    expect(chunks).toContainEqual({
      type: 'tool-output-available',
      toolCallId: 'call_1',
      output: { text: 'sunny in Paris' },
      dynamic: true,
    })
    const message = await lastMessage(chunks)
    expect(message?.parts[1]).toMatchObject({ type: 'text', text: 'Checking.' })
    expect(message?.parts[2]).toMatchObject({ type: 'dynamic-tool', toolName: 'weather', state: 'output-available' })
  })

  test('tool input that is not JSON is a tool input error, then the tool error the model was given', async () => {
    const harness = await harnessWith([
      { toolCalls: [{ id: 'call_x', name: 'weather', arguments: '{"city": Par' }] },
      text('Sorry.'),
    ])
    const agent = await harness.createAgent()
    const chunks = await collect(uiMessageStream(agent.stream('Weather?')))
    expect(chunks).toContainEqual({
      type: 'tool-input-error',
      toolCallId: 'call_x',
      toolName: 'weather',
      input: '{"city": Par',
      errorText: 'The model sent tool input that is not valid JSON.',
    })
    const message = await lastMessage(chunks)
    expect(message?.parts[1]).toMatchObject({ type: 'tool-weather', state: 'output-error', rawInput: '{"city": Par' })
    expect(message?.parts[1]).toMatchObject({ errorText: expect.stringMatching(/^Tool error/) })
  })

  test('a model call that fails and is retried keeps its streamed text closed, and the retry streams new parts', async () => {
    const harness = await harnessWith([
      fail('SERVER', 'overloaded', { text: 'Half an ans', phase: 'streaming' }),
      text('Whole answer.'),
    ])
    const agent = await harness.createAgent()
    const chunks = await collect(uiMessageStream(agent.stream('Hi')))
    expect(chunks).toEqual([
      { type: 'start', messageId: `${agent.id}:turn-1` },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1-0' },
      { type: 'text-delta', id: 'text-1-0', delta: 'Half an ans' },
      { type: 'text-end', id: 'text-1-0' },
      { type: 'text-start', id: 'text-1.2-0' },
      { type: 'text-delta', id: 'text-1.2-0', delta: 'Whole answer.' },
      { type: 'text-end', id: 'text-1.2-0' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ])
    expect((await lastMessage(chunks))?.parts).toHaveLength(3)
  })

  test('a cancelled turn ends with abort and who cancelled', async () => {
    const harness = await harnessWith([{ text: 'partial', hang: true }])
    const agent = await harness.createAgent()
    const stream = uiMessageStream(agent.stream('Hi'))
    const reader = stream.getReader()
    const seen: UIMessageChunk[] = []
    for (;;) {
      const next = await reader.read()
      if (next.done) break
      seen.push(next.value)
      if (next.value.type === 'text-delta') agent.cancel()
    }
    expect(seen.slice(-3)).toEqual([
      { type: 'text-end', id: 'text-1-0' },
      { type: 'finish-step' },
      { type: 'abort', reason: 'user' },
    ])
  })

  test('a failed turn ends with an error chunk and finish reason error; onError maps the text', async () => {
    const harness = await harnessWith([fail('BAD_REQUEST', 'secret upstream detail', { retryable: false })])
    const agent = await harness.createAgent()
    const chunks = await collect(
      uiMessageStream(agent.stream('Hi'), {
        onError: (reason) => (reason.kind === 'error' ? `code ${reason.error.code}` : 'interrupted'),
      }),
    )
    expect(chunks.slice(-3)).toEqual([
      { type: 'finish-step' },
      { type: 'error', errorText: 'code BAD_REQUEST' },
      { type: 'finish', finishReason: 'error' },
    ])
  })
})

describe('resuming', () => {
  /** The frames of the agent's last turn, whole. */
  async function wholeTurn(agent: Agent, options: UIMessageSessionResponseOptions = {}): Promise<Frame[]> {
    let start = agent.session.length - 1
    while (agent.session.at(start)?.type !== 'turn/start') start--
    return framesOf(uiMessageStreamResponse(agent, { heartbeatMs: 0, ...options, lastEventId: start - 1 }))
  }

  test('after every frame id of a finished turn, the stream gives exactly the frames after it', async () => {
    const harness = await harnessWith([
      toolTurn,
      // A text block that streams nothing gives three chunks for one event, numbered within it.
      {
        chunks: [
          { type: 'block-end', index: 0, block: { type: 'text', text: 'Whole.' } },
          { type: 'finish', reason: 'error', failure: { code: 'BAD_REQUEST', message: 'no', retryable: false } },
        ],
      },
    ])
    const agent = await harness.createAgent()
    await agent.run('Weather?')
    const whole = await wholeTurn(agent)
    // text-start, the whole text and text-end of one event are `<seq>.0`, `<seq>.1` and `<seq>`.
    const textAt = whole.findIndex((frame) => frame.data.includes('"Whole."'))
    const seq = whole[textAt]?.id?.split('.')[0]
    expect(whole.slice(textAt - 1, textAt + 2).map((frame) => frame.id)).toEqual([`${seq}.0`, `${seq}.1`, seq])
    expect(whole.at(-3)?.data).toContain('"error"')
    expect(whole.at(-3)?.id).toMatch(/^\d+\.0$/)
    const ids = whole.slice(0, -1).map((frame) => frame.id as string)
    expect(new Set(ids).size).toBe(ids.length)
    for (const [index, id] of ids.entries()) {
      const rest = await framesOf(uiMessageStreamResponse(agent, { heartbeatMs: 0, lastEventId: id }))
      expect(rest, `after ${id}`).toEqual(whole.slice(index + 1))
    }
  })

  test('a reader cut off mid-turn reconnects over HTTP with Last-Event-ID and gets every later frame once', async () => {
    const held = gate()
    const slow = heldWeatherTool(held.promise, (city) => `foggy in ${city}`)
    const harness = await harnessWith([toolTurn, text('Foggy.', { chunkSize: 2 })], [slow])
    const agent = await harness.createAgent()
    const server: Server = createServer((request, response) => {
      const lastEventId = request.headers['last-event-id']
      const answer =
        typeof lastEventId === 'string'
          ? uiMessageStreamResponse(agent, { lastEventId, heartbeatMs: 0 })
          : uiMessageStreamResponse(agent.stream('Weather?'), { heartbeatMs: 0 })
      void writeResponse(answer, response)
    })
    const loopback = await listenOnLoopback(server)
    cleanups.push(loopback.close)
    const url = `${loopback.origin}/`

    const first: Frame[] = []
    const controller = new AbortController()
    const response = await fetch(url, { method: 'POST', signal: controller.signal })
    const parser = createParser({ onEvent: (event) => first.push({ id: event.id, data: event.data }) })
    const decoder = new TextDecoder()
    const reader = response.body?.getReader()
    while (!first.some((frame) => frame.data.includes('tool-input-available'))) {
      const next = await reader?.read()
      if (next === undefined || next.done) throw new Error('the stream ended early')
      parser.feed(decoder.decode(next.value, { stream: true }))
    }
    controller.abort()
    expect(agent.status).toBe('running')

    const lastEventId = first.at(-1)?.id as string
    const resumed = fetch(url, { headers: { 'last-event-id': lastEventId } })
    held.open()
    const rest = await framesOf(await resumed)
    await agent.whenIdle()
    expect([...first, ...rest]).toEqual(await wholeTurn(agent))
    expect(rest[0]?.data).toContain('tool-output-available')
  })

  test('an agent with no running turn answers 204 (useChat then keeps its messages), and an empty chunk stream', async () => {
    const harness = await harnessWith([text('Hi.')])
    const agent = await harness.createAgent()
    const idle = uiMessageStreamResponse(agent)
    expect(idle.status).toBe(204)
    expect(idle.body).toBeNull()
    await agent.run('Hello')
    expect(uiMessageStreamResponse(agent).status).toBe(204)
    expect(await collect(uiMessageStream(agent))).toEqual([])
  })

  test('a running turn is served from its start to a reader without Last-Event-ID', async () => {
    const held = gate()
    const slow = heldWeatherTool(held.promise, () => 'hail')
    const harness = await harnessWith([toolTurn, text('Hail.')], [slow])
    const agent = await harness.createAgent()
    const run = agent.stream('Weather?')
    await until(() => agent.session.at(agent.session.length - 1)?.type === 'tool/call', 'the tool call')
    const active = uiMessageStream(agent)
    held.open()
    const chunks = await collect(active)
    await run.result
    expect(chunks).toEqual(await collect(uiMessageStream(run)))
  })
})

describe('the response', () => {
  test('an idle connection gets heartbeat comments, which the AI SDK reader skips; the signal ends the response', async () => {
    const held = gate()
    const slow = heldWeatherTool(held.promise, () => 'snow')
    const harness = await harnessWith([toolTurn, text('Snow.')], [slow])
    const agent = await harness.createAgent()
    const shutdown = new AbortController()
    const response = uiMessageStreamResponse(agent.stream('Weather?'), { heartbeatMs: 5, signal: shutdown.signal })
    const [raw, parsed] = response.body?.tee() ?? []
    const chunks = collect(
      parseJsonEventStream({ stream: parsed as ReadableStream<Uint8Array>, schema: uiMessageChunkSchema }),
    )
    const decoder = new TextDecoder()
    let received = ''
    const reader = (raw as ReadableStream<Uint8Array>).getReader()
    while (!received.includes(': hb\n\n') || !received.includes('tool-input-available')) {
      const next = await reader.read()
      if (next.done) throw new Error('the stream ended early')
      received += decoder.decode(next.value, { stream: true })
    }
    shutdown.abort()
    while (!(await reader.read()).done) {}
    const results = await chunks
    expect(results.every((result) => result.success)).toBe(true)
    expect(results.at(-1)).toMatchObject({ value: { type: 'tool-input-available' } })
    // The turn goes on without the reader.
    held.open()
    await agent.whenIdle()
    expect(agent.session.at(agent.session.length - 1)?.type).toBe('turn/end')
  })
})

test('a reader that falls more than maxLag events behind is cut off, and resumes from the log', async () => {
  const harness = await harnessWith([{ text: 'a long answer in many pieces', chunkSize: 1 }])
  const agent = await harness.createAgent()
  const run = agent.stream('Talk')
  const response = uiMessageStreamResponse(run, { heartbeatMs: 0, maxLag: 2 })
  await run.result
  const read = framesOf(response)
  await expect(read).rejects.toMatchObject({ code: 'STREAM_OVERFLOW' })
  // Nothing is lost: the log serves the whole turn to a reconnect.
  const whole = await framesOf(uiMessageStreamResponse(agent, { heartbeatMs: 0, lastEventId: 0 }))
  expect(whole.at(-2)?.data).toBe('{"type":"finish","finishReason":"stop"}')
})

describe('bad input', () => {
  test.each([
    ['abc', 'not-a-seq'],
    ['-1', 'not-a-seq'],
    ['1.', 'not-a-seq'],
    ['01', 'not-a-seq'],
    ['3.x', 'not-a-seq'],
    ['', 'not-a-seq'],
    ['99999', 'beyond-log'],
  ])('Last-Event-ID %j answers 400 INVALID_LAST_EVENT_ID (%s)', async (lastEventId, problem) => {
    const harness = await harnessWith([text('Hi.')])
    const agent = await harness.createAgent()
    await agent.run('Hello')
    const response = uiMessageStreamResponse(agent, { lastEventId })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: { code: 'INVALID_LAST_EVENT_ID', value: lastEventId } })
    expect(() => uiMessageStream(agent, { lastEventId })).toThrow(expect.objectContaining({ problem }))
  })

  test.each([
    ['heartbeatMs', -1],
    ['heartbeatMs', 1.5],
    ['maxLag', 0],
    ['sendReasoning', 'yes'],
    ['dynamicTools', 1],
    ['messageId', 'fixed'],
    ['toolOutput', {}],
    ['onError', 'oops'],
  ])('option %s = %j is InvalidArgumentError naming it', async (name, value) => {
    const harness = await harnessWith([])
    const agent = await harness.createAgent()
    let thrown: unknown
    try {
      uiMessageStreamResponse(agent, { [name]: value } as never)
    } catch (error) {
      thrown = error
    }
    expect(InvalidArgumentError.is(thrown)).toBe(true)
    expect((thrown as InvalidArgumentError).argument).toBe(`options.${name}`)
  })

  test('a run does not take lastEventId, and a source that is no agent, run or session is refused', async () => {
    const harness = await harnessWith([text('Hi.')])
    const agent = await harness.createAgent()
    const run = agent.stream('Hi')
    expect(() => uiMessageStreamResponse(run, { lastEventId: '3' } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: 'options.lastEventId' }),
    )
    await run.result
    for (const source of [null, 42, {}, { session: {} }]) {
      expect(() => uiMessageStream(source as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: 'source' }),
      )
    }
  })
})
