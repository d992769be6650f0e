/**
 * A tail served as Server-Sent Events by two "nodes" (two node:http servers, each with a pool and
 * tails of its own) while a writer in a child process runs the turns: a client reading from one
 * node, disconnecting, and reconnecting to the other with `Last-Event-ID` gets every event exactly
 * once, as stored. A refused `Last-Event-ID` is the final `event: error` frame.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import type { SessionEvent } from '../../src/index.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'
import { type TailNode, startTailNode } from './tail-node.js'
import { removeTailWriter, startTailWriter } from './tail-writer.js'
import { readSseFrames, type SseFrame } from '../helpers/sse-frames.js'

let schema: TestSchema | undefined
const cleanups: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  if (skipPostgres) return
  schema = await createTestSchema('tail_sse')
}, 60_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

afterAll(async () => {
  await removeTailWriter()
  await schema?.drop()
})

/** A node: its own pool and tails, serving `GET /sessions/<id>/events`. */
async function startNode(): Promise<TailNode> {
  // Heartbeats wake the client's read loop, so it notices when it has what it waits for.
  const node = await startTailNode({
    connectionString: schema!.connectionString,
    schema: schema!.schema,
    heartbeatMs: 50,
  })
  cleanups.push(() => node.close())
  return node
}

/**
 * Reads the event stream of `url` until `enough(frames)` holds or it ends, then disconnects.
 *
 * @returns the frames read
 */
async function read(
  url: string,
  headers: Record<string, string>,
  enough: (frames: readonly SseFrame[]) => boolean,
): Promise<SseFrame[]> {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  return readSseFrames(response, controller, enough)
}

async function stored(sessionId: string): Promise<readonly SessionEvent[]> {
  const adapter = postgresPersistence({ connectionString: schema!.connectionString, schema: schema!.schema })
  try {
    return (await adapter.load(sessionId)).events
  } finally {
    await adapter.close()
  }
}

describe.skipIf(skipPostgres)('a PostgreSQL tail served as Server-Sent Events', () => {
  test('a client that reconnects with Last-Event-ID to another node gets every event exactly once', async () => {
    const sessionId = 'sse-across-nodes'
    const writer = await startTailWriter({
      connectionString: schema!.connectionString,
      schema: schema!.schema,
      sessionId,
    })
    cleanups.push(() => writer.exit())
    const first = await writer.turns(1)
    const [nodeA, nodeB] = [await startNode(), await startNode()]
    const path = `/sessions/${sessionId}/events`
    // Turns run while the client reads: part of them from node A, the rest from node B.
    const turning = writer.turns(2)
    const received = await read(`${nodeA.origin}${path}`, {}, (frames) => frames.length >= first + 5)
    // The connection drops after the client took these (a chunk may hold more: those never arrived).
    const fromA = received.slice(0, first + 5)
    const lastId = fromA.at(-1)!.id!
    await turning
    let length = Number.POSITIVE_INFINITY
    const more = writer.turns(1).then((after) => {
      length = after
    })
    const fromB = await read(`${nodeB.origin}${path}`, { 'last-event-id': lastId }, (frames) =>
      frames.some((frame) => frame.id === String(length - 1)),
    )
    await more
    const frames = [...fromA, ...fromB]
    expect(frames.map((frame) => frame.id)).toEqual(Array.from({ length }, (_, seq) => String(seq)))
    const log = await stored(sessionId)
    expect(frames.map((frame) => JSON.parse(frame.data) as unknown)).toEqual(log)
    expect(frames.map((frame) => frame.event)).toEqual(log.map((event) => event.type))
    // The disconnected client's tail ended: node A holds no connection for it any more.
    await expect.poll(() => nodeA.pool.totalCount - nodeA.pool.idleCount, { timeout: 5000, interval: 20 }).toBe(0)
  }, 40_000)

  test.each([
    ['not a seq', 'abc', 'not-a-seq'],
    ['past the log', '100000', 'beyond log'],
  ])(
    'a Last-Event-ID %s ends the stream with an event: error frame INVALID_LAST_EVENT_ID',
    async (_name, value, words) => {
      const sessionId = `sse-bad-${value}`
      const writer = await startTailWriter({
        connectionString: schema!.connectionString,
        schema: schema!.schema,
        sessionId,
      })
      cleanups.push(() => writer.exit())
      await writer.turns(1)
      const node = await startNode()
      const frames = await read(`${node.origin}/sessions/${sessionId}/events`, { 'last-event-id': value }, () => false)
      expect(frames).toHaveLength(1)
      expect(frames[0]).toMatchObject({ id: undefined, event: 'error' })
      const data = JSON.parse(frames[0]!.data) as { code: string; message: string }
      expect(data.code).toBe('INVALID_LAST_EVENT_ID')
      expect(data.message).toContain(JSON.stringify(value))
      expect(data.message.replace('-', ' ')).toMatch(words === 'not-a-seq' ? /not a seq/ : /beyond the log/)
    },
    30_000,
  )
})
