/**
 * An HTTP "node" for the tail tests: a node:http server with a pool and tails of its own, serving
 * `GET /sessions/<id>/events` as Server-Sent Events from a PostgreSQL tail, resuming after the
 * request's `Last-Event-ID`. Two of them stand for two machines behind a load balancer.
 */
import { createServer } from 'node:http'
import pg from 'pg'
import { sseResponse, writeResponse } from '../../src/index.js'
import { createPostgresTail, type PostgresTail } from '../../src/postgres/index.js'
import { listenOnLoopback } from '../helpers/loopback.js'

/** A running node. */
export interface TailNode {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string
  readonly pool: pg.Pool
  readonly tails: PostgresTail
  /** Drops its connections, closes its tails and ends its pool. */
  close(): Promise<void>
}

/**
 * Starts a node over `schema`.
 *
 * @param options - the database, the tails' poll interval, the SSE heartbeat (0: none)
 * @returns the node
 */
export async function startTailNode(options: {
  readonly connectionString: string
  readonly schema: string
  readonly pollMs?: number
  readonly heartbeatMs: number
}): Promise<TailNode> {
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 6 })
  const tails = createPostgresTail({
    pool,
    schema: options.schema,
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
  })
  const server = createServer((request, response) => {
    const sessionId = decodeURIComponent(/^\/sessions\/([^/]+)\/events$/.exec(request.url ?? '')?.[1] ?? '')
    const lastEventId = request.headers['last-event-id']
    const tail = tails.tail(sessionId, { lastEventId: typeof lastEventId === 'string' ? lastEventId : null })
    void writeResponse(sseResponse(tail, { heartbeatMs: options.heartbeatMs }), response)
  })
  const loopback = await listenOnLoopback(server)
  return {
    origin: loopback.origin,
    pool,
    tails,
    close: async () => {
      await loopback.close()
      await tails.close()
      await pool.end()
    },
  }
}
