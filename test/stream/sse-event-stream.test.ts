/**
 * `sseResponse` over a plain stream of committed events (what a PostgreSQL tail is), served by
 * node:http on loopback through `writeResponse` and read by fetch: the same frames as for an
 * agent, a failure as the final `event: error` frame, and a client that goes away ending the
 * stream's iteration.
 */
import { createServer } from 'node:http'
import { afterEach, describe, expect, test } from 'vitest'
import { type AgentStreamEvent, createHarness, sseResponse, streamSession, writeResponse } from 'yoke'
import { scriptedModel, text } from 'yoke/testing'
import { listenOnLoopback } from '../helpers/loopback.js'
import { readSseFrames, type SseFrame } from '../helpers/sse-frames.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A committed event as a log reader yields it. */
function event(seq: number, type: string, data: unknown): AgentStreamEvent {
  return { type, seq, time: 1_000 + seq, data } as unknown as AgentStreamEvent
}

/** Serves `open()` as SSE at the server's root; the origin. */
async function serve(open: () => AsyncIterable<AgentStreamEvent>): Promise<string> {
  const server = createServer((_request, response) => {
    void writeResponse(sseResponse(open(), { heartbeatMs: 0 }), response)
  })
  const loopback = await listenOnLoopback(server)
  cleanups.push(loopback.close)
  return loopback.origin
}

/** Reads frames until the stream ends or `count` came (then disconnects). */
async function read(origin: string, count = Number.POSITIVE_INFINITY): Promise<SseFrame[]> {
  const controller = new AbortController()
  const response = await fetch(origin, { signal: controller.signal })
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  return readSseFrames(response, controller, (frames) => frames.length >= count)
}

describe('sseResponse over a stream of committed events', () => {
  test('each event is a frame with its seq as id, its type and the event as JSON; the response ends with the stream', async () => {
    const events = [
      event(4, 'turn/start', { turn: 2 }),
      event(5, 'test/note', { text: 'a\nb' }),
      event(6, 'turn/end', {}),
    ]
    const origin = await serve(async function* () {
      yield* events
    })
    const frames = await read(origin)
    expect(frames.map((frame) => [frame.id, frame.event])).toEqual([
      ['4', 'turn/start'],
      ['5', 'test/note'],
      ['6', 'turn/end'],
    ])
    expect(frames.map((frame) => JSON.parse(frame.data) as unknown)).toEqual(events)
  })

  test('a stream that fails ends with an event: error frame without an id, after the events before it', async () => {
    const origin = await serve(async function* () {
      yield event(0, 'test/note', {})
      throw Object.assign(new Error('the log is damaged at seq 1'), { code: 'CORRUPT_LOG' })
    })
    const frames = await read(origin)
    expect(frames).toHaveLength(2)
    expect(frames[1]).toMatchObject({ id: undefined, event: 'error' })
    expect(JSON.parse(frames[1]!.data)).toEqual({ code: 'CORRUPT_LOG', message: 'the log is damaged at seq 1' })
  })

  test('a client that goes away ends the iteration of the stream', async () => {
    let ended = false
    const origin = await serve(async function* () {
      try {
        for (let seq = 0; ; seq++) {
          yield event(seq, 'test/note', { seq })
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
      } finally {
        ended = true
      }
    })
    expect(await read(origin, 3)).toHaveLength(3)
    await expect.poll(() => ended, { timeout: 5000 }).toBe(true)
  })

  test('a session stream is served as a stream of events too', async () => {
    const harness = await createHarness({ model: scriptedModel([text('hello')]) })
    cleanups.push(() => harness.close())
    const agent = await harness.openAgent('a1')
    await agent.run('hi')
    const origin = await serve(() => streamSession(agent, { until: 'turn-end' }))
    const frames = await read(origin)
    expect(frames.map((frame) => Number(frame.id))).toEqual(agent.session.events.map((each) => each.seq))
    expect(frames.at(-1)?.event).toBe('turn/end')
  })
})
