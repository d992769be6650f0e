/**
 * `sseResponse` served by node:http on loopback through `writeResponse`, read by fetch and
 * eventsource-parser, over JSONL persistence: disconnects, resumes with Last-Event-ID, heartbeats,
 * bad ids, and a reader that stops reading.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createParser } from 'eventsource-parser'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  type Agent,
  createHarness,
  defineTool,
  type SessionEvent,
  type SseOptions,
  sseResponse,
  StreamOverflowError,
  writeResponse,
} from 'yoke'
import { scriptedModel, type ScriptedReply, text, tool } from 'yoke/testing'
import { listenOnLoopback } from '../helpers/loopback.js'

/** One SSE event as a client received it. */
interface Received {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const echo = defineTool({
  name: 'echo',
  description: 'Echo',
  input: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: ({ text: said }) => `echo: ${said}`,
})

/** A script entry that waits for `release()` before it answers. */
function held(reply: ScriptedReply): { readonly entry: () => Promise<ScriptedReply>; readonly release: () => void } {
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  return {
    entry: async () => {
      await gate
      return reply
    },
    release,
  }
}

async function jsonlHarness(script: Parameters<typeof scriptedModel>[0], dir?: string) {
  const root = dir ?? (await mkdtemp(join(tmpdir(), 'yoke-sse-')))
  if (dir === undefined) cleanups.push(() => rm(root, { recursive: true, force: true }))
  const harness = await createHarness({ model: scriptedModel(script), persistence: { dir: root }, tools: [echo] })
  cleanups.push(() => harness.close().catch(() => undefined))
  return { harness, dir: root }
}

/** A node:http server: POST /chat starts a turn unless Last-Event-ID resumes it; GET /events/<id> streams a session. */
async function serve(agents: readonly Agent[], options: SseOptions = {}): Promise<string> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const lastEventId = request.headers['last-event-id']
    const url = request.url ?? ''
    const agent = url.startsWith('/events/') ? agents.find((each) => each.id === url.slice(8)) : agents[0]
    if (agent === undefined) {
      response.writeHead(404).end()
      return
    }
    if (url.startsWith('/events/')) {
      const resumeAfter = typeof lastEventId === 'string' ? lastEventId : null
      void writeResponse(sseResponse(agent, { ...options, lastEventId: resumeAfter }), response)
    } else if (typeof lastEventId === 'string') {
      void writeResponse(sseResponse(agent, { ...options, lastEventId, until: 'turn-end' }), response)
    } else {
      void writeResponse(sseResponse(agent.stream('check a, b and c'), options), response)
    }
  })
  const loopback = await listenOnLoopback(server)
  cleanups.push(loopback.close)
  return loopback.origin
}

interface Reading {
  readonly status: number
  readonly contentType: string | null
  readonly cacheControl: string | null
  readonly events: Received[]
  readonly comments: string[]
  /** `'ended'` when the server closed the stream, `'aborted'` when the client stopped. */
  readonly outcome: 'ended' | 'aborted'
  readonly body?: unknown
}

/** Reads an SSE response with fetch; `stopWhen` aborts the request after the event it accepts. */
async function read(
  url: string,
  options: {
    readonly method?: string
    readonly lastEventId?: string
    readonly stopWhen?: (event: Received, events: readonly Received[], comments: readonly string[]) => boolean
    readonly stopOnComment?: (comment: string) => boolean
  } = {},
): Promise<Reading> {
  const controller = new AbortController()
  const response = await fetch(url, {
    method: options.method ?? 'POST',
    headers: options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId },
    signal: controller.signal,
  })
  const base = {
    status: response.status,
    contentType: response.headers.get('content-type'),
    cacheControl: response.headers.get('cache-control'),
  }
  if (response.status !== 200)
    return { ...base, events: [], comments: [], outcome: 'ended', body: await response.json() }
  const events: Received[] = []
  const comments: string[] = []
  let stop = false
  const parser = createParser({
    onEvent: (message) => {
      if (stop) return
      const received = { id: message.id, event: message.event, data: message.data }
      events.push(received)
      if (options.stopWhen?.(received, events, comments) === true) stop = true
    },
    onComment: (comment) => {
      comments.push(comment)
      if (options.stopOnComment?.(comment) === true) stop = true
    },
  })
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  for (;;) {
    const chunk = await reader.read()
    if (chunk.done) return { ...base, events, comments, outcome: 'ended' }
    parser.feed(decoder.decode(chunk.value, { stream: true }))
    if (stop) {
      controller.abort()
      await reader.cancel().catch(() => undefined)
      return { ...base, events, comments, outcome: 'aborted' }
    }
  }
}

function eventsOf(readings: readonly Reading[]): SessionEvent[] {
  return readings.flatMap((reading) =>
    reading.events.map((received) => {
      const event = JSON.parse(received.data) as SessionEvent
      expect(received.id).toBe(String(event.seq))
      expect(received.event).toBe(event.type)
      return event
    }),
  )
}

/** The log's events of turn `turn`, from its turn/start to its turn/end. */
function turnSpan(events: readonly SessionEvent[], turn = 1): SessionEvent[] {
  const start = events.findIndex(
    (event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === turn,
  )
  const end = events.findIndex((event) => event.type === 'turn/end' && (event.data as { turn: number }).turn === turn)
  expect(start).toBeGreaterThanOrEqual(0)
  expect(end).toBeGreaterThan(start)
  return events.slice(start, end + 1)
}

/** The turn's log as a fresh harness reads it back from the JSONL files. */
async function storedSpan(dir: string, id: string): Promise<SessionEvent[]> {
  const { harness } = await jsonlHarness([], dir)
  const agent = await harness.openAgent(id)
  const span = turnSpan(agent.session.events)
  await harness.close()
  return span
}

/** A turn of three steps: two parallel calls with text, then a held step with a third call, then the answer. */
function threeStepScript() {
  const second = held({
    text: 'And c. ',
    chunkSize: 2,
    toolCalls: [{ id: 'call_c', name: 'echo', arguments: { text: 'c' } }],
  })
  const script = [
    tool(
      'echo',
      { text: 'a' },
      {
        text: 'Checking a and b. ',
        chunkSize: 3,
        toolCalls: [
          { id: 'call_a', name: 'echo', arguments: { text: 'a' } },
          { id: 'call_b', name: 'echo', arguments: { text: 'b' } },
        ],
      },
    ),
    second.entry,
    text('All three echoed: a, b, c.', { chunkSize: 4 }),
  ]
  return { script, release: second.release }
}

const isStepTwo = (event: Received): boolean =>
  event.event === 'step/start' && (JSON.parse(event.data) as { data: { step: number } }).data.step === 2

describe('sseResponse over node:http', () => {
  test('a client that disconnects mid-turn and reconnects with Last-Event-ID gets the whole turn exactly once', async () => {
    const { script, release } = threeStepScript()
    const { harness, dir } = await jsonlHarness(script)
    const agent = await harness.createAgent()
    const url = await serve([agent])
    const first = await read(`${url}/chat`, { stopWhen: isStepTwo })
    expect(first).toMatchObject({ status: 200, outcome: 'aborted', cacheControl: 'no-cache' })
    expect(first.contentType).toMatch(/^text\/event-stream/)
    expect(agent.status).toBe('running')
    const lastId = first.events.at(-1)?.id ?? ''
    const resumed = read(`${url}/chat`, { lastEventId: lastId })
    // Released only now: the second connection gets stored events first, then live ones.
    setTimeout(release, 20)
    const second = await resumed
    expect(second.outcome).toBe('ended')
    await agent.whenIdle()
    const received = eventsOf([first, second])
    const span = turnSpan(agent.session.events)
    expect(received).toEqual(span)
    expect(new Set(received.map((event) => event.seq)).size).toBe(received.length)
    expect(span.filter((event) => event.type === 'tool/call')).toHaveLength(3)
    expect(span.filter((event) => event.type === 'assistant/chunk').length).toBeGreaterThan(10)
    await harness.close()
    expect(await storedSpan(dir, agent.id)).toEqual(received)
  })

  test('a client that comes back after the turn ended gets the rest of it from the log, then the response ends', async () => {
    const { script, release } = threeStepScript()
    const { harness, dir } = await jsonlHarness(script)
    const agent = await harness.createAgent()
    const url = await serve([agent])
    const first = await read(`${url}/chat`, { stopWhen: isStepTwo })
    release()
    await agent.whenIdle()
    const second = await read(`${url}/chat`, { lastEventId: first.events.at(-1)?.id ?? '' })
    expect(second.outcome).toBe('ended')
    const received = eventsOf([first, second])
    expect(received).toEqual(turnSpan(agent.session.events))
    // Reconnecting again with the turn/end id: nothing more, the response ends at once.
    const third = await read(`${url}/chat`, { lastEventId: second.events.at(-1)?.id ?? '' })
    expect(third).toMatchObject({ status: 200, outcome: 'ended', events: [] })
    await harness.close()
    expect(await storedSpan(dir, agent.id)).toEqual(received)
  })

  test('a disconnect never cancels the turn', async () => {
    const { script, release } = threeStepScript()
    const { harness } = await jsonlHarness(script)
    const agent = await harness.createAgent()
    const url = await serve([agent])
    await read(`${url}/chat`, { stopWhen: (event) => event.event === 'turn/start' })
    release()
    await agent.whenIdle()
    const end = agent.session.events.at(-1)
    expect(end?.type).toBe('turn/end')
    expect(end?.data).toMatchObject({ reason: { kind: 'completed' } })
  })

  test('heartbeat comments arrive on the interval while the turn waits', async () => {
    const { script, release } = threeStepScript()
    const { harness } = await jsonlHarness(script)
    const agent = await harness.createAgent()
    const url = await serve([agent], { heartbeatMs: 15 })
    const reading = await read(`${url}/chat`, { stopOnComment: (comment) => comment.trim() === 'hb' })
    expect(reading.outcome).toBe('aborted')
    expect(reading.comments.map((comment) => comment.trim())).toContain('hb')
    release()
    await agent.whenIdle()
  })

  test('a session stream follows the whole log from seq 0 (GET /events/<id>)', async () => {
    const { harness } = await jsonlHarness([text('one'), text('two')])
    const agent = await harness.createAgent()
    await agent.run('first')
    const url = await serve([agent])
    const reading = read(`${url}/events/${agent.id}`, {
      method: 'GET',
      stopWhen: (_event, events) => events.filter((each) => each.event === 'turn/end').length === 2,
    })
    await agent.run('second')
    expect(eventsOf([await reading])).toEqual(agent.session.events)
  })
})

describe('sseResponse bad Last-Event-ID', () => {
  test.each([['abc'], ['-1'], ['1.5'], ['']])(
    'Last-Event-ID %j is answered 400 with the code and the value, and the log is untouched',
    async (value) => {
      const { harness, dir } = await jsonlHarness([text('hi')])
      const agent = await harness.createAgent()
      await agent.run('one')
      const before = agent.session.events
      const url = await serve([agent])
      const reading = await read(`${url}/events/${agent.id}`, { method: 'GET', lastEventId: value })
      expect(reading.status).toBe(400)
      expect(reading.body).toEqual({
        error: { code: 'INVALID_LAST_EVENT_ID', message: expect.stringContaining(JSON.stringify(value)), value },
      })
      expect(agent.session.events).toBe(before)
      await harness.close()
      expect(await storedSpan(dir, agent.id)).toEqual(turnSpan(before))
    },
  )

  test('a Last-Event-ID beyond the log is answered 400, naming the last seq', async () => {
    const { harness } = await jsonlHarness([text('hi')])
    const agent = await harness.createAgent()
    await agent.run('one')
    const lastSeq = agent.session.length - 1
    const url = await serve([agent])
    const reading = await read(`${url}/events/${agent.id}`, { method: 'GET', lastEventId: String(lastSeq + 1) })
    expect(reading.status).toBe(400)
    expect(reading.body).toMatchObject({ error: { code: 'INVALID_LAST_EVENT_ID', value: String(lastSeq + 1) } })
    expect((reading.body as { error: { message: string } }).error.message).toContain(`last seq ${lastSeq}`)
  })

  test("another session's id: refused when past this log, else read as a seq of this log (ids are per session)", async () => {
    const { harness } = await jsonlHarness([tool('echo', { text: 'x' }), text('long'), text('short')])
    const long = await harness.createAgent()
    await long.run('a longer turn with a tool call')
    const short = await harness.createAgent()
    await short.run('short')
    expect(long.session.length).toBeGreaterThan(short.session.length)
    const url = await serve([long, short])
    const foreign = String(long.session.length - 1)
    const refused = await read(`${url}/events/${short.id}`, { method: 'GET', lastEventId: foreign })
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'INVALID_LAST_EVENT_ID' } } })
    const inRange = await read(`${url}/events/${short.id}`, {
      method: 'GET',
      lastEventId: '0',
      stopWhen: (event) => event.event === 'turn/end',
    })
    expect(eventsOf([inRange])).toEqual(short.session.slice(1))
  })
})

describe('sseResponse back-pressure', () => {
  test('a body nobody reads holds a bounded number of events, then fails with StreamOverflowError', async () => {
    const { harness } = await jsonlHarness([text('x'.repeat(400), { chunkSize: 1 })])
    const agent = await harness.createAgent()
    const response = sseResponse(agent, { maxLag: 8 })
    await agent.run('go')
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    const frames: string[] = []
    const decoder = new TextDecoder()
    let failure: unknown
    for (;;) {
      try {
        const chunk = await reader.read()
        if (chunk.done) break
        frames.push(decoder.decode(chunk.value))
      } catch (error) {
        failure = error
        break
      }
    }
    expect(StreamOverflowError.is(failure)).toBe(true)
    expect(failure).toMatchObject({ code: 'STREAM_OVERFLOW', limit: 8 })
    // The body took at most its own small queue before it stopped pulling.
    expect(frames.length).toBeLessThanOrEqual(16)
  })

  test('a client that stops reading is cut off; the turn completes, the log is whole, and a resume gets the rest', async () => {
    // About 6 MB of text in 4 kB chunks: far more than the socket buffers hold.
    const { harness, dir } = await jsonlHarness([text('y'.repeat(6_000_000), { chunkSize: 4000 })])
    const agent = await harness.createAgent()
    const url = await serve([agent], { maxLag: 64 })
    const cut = await new Promise<{ readonly closed: 'aborted' | 'ended' | 'error' }>((resolve) => {
      const request = httpRequest(`${url}/chat`, { method: 'POST' }, (response) => {
        // Never read: no 'data' listener, no resume().
        response.on('aborted', () => resolve({ closed: 'aborted' }))
        response.on('error', () => resolve({ closed: 'error' }))
        response.on('end', () => resolve({ closed: 'ended' }))
        response.socket.on('close', () => resolve({ closed: 'aborted' }))
      })
      request.on('error', () => resolve({ closed: 'error' }))
      request.end()
    })
    expect(cut.closed).not.toBe('ended')
    await agent.whenIdle()
    const span = turnSpan(agent.session.events)
    expect(span.at(-1)?.data).toMatchObject({ reason: { kind: 'completed' } })
    // Resuming from the turn's start reads the rest from the log.
    const resumed = await read(`${url}/chat`, { lastEventId: String(span[0]?.seq) })
    expect(eventsOf([resumed])).toEqual(span.slice(1))
    await harness.close()
    expect(await storedSpan(dir, agent.id)).toEqual(span)
  }, 60_000)
})
