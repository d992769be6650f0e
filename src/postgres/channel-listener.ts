/**
 * One pooled connection `LISTEN`ing on one channel while anybody holds it: the workers hear their
 * inbox through it, the tails the appends. A connection that drops is replaced after a delay, and
 * the holder is told, since what was announced while nobody listened is lost.
 *
 * @module
 */
import type { PgPool, PgPoolClient } from './pg-pool.js'
import { quoteIdentifier } from './postgres-dialect.js'

/** A notification as `pg` delivers it. */
interface PgNotification {
  readonly channel: string
  readonly payload?: string
}

/** A pooled `pg` client that also delivers notifications (every `pg.Client` does). */
interface ListeningClient extends PgPoolClient {
  on(event: 'notification', listener: (message: PgNotification) => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  removeListener(event: 'notification', listener: (message: PgNotification) => void): unknown
  removeListener(event: 'error', listener: (error: Error) => void): unknown
}

/** What {@link createChannelListener} needs. @internal */
export interface ChannelListenerOptions {
  /** Where the connection is checked out from (and given back to). */
  readonly pool: PgPool
  /** The channel (`LISTEN "<channel>"`). */
  readonly channel: string
  /** How long to wait before connecting again after the connection failed. */
  readonly retryMs: number
  /** Each notification's payload. Must not throw. */
  readonly heard: (payload: string | undefined) => void
  /**
   * A connection started listening: whatever was announced before it (or while an earlier one was
   * down) was heard by nobody, so look again. Must not throw.
   */
  readonly listening: () => void
  /** A connection failed or could not be opened (it is tried again after `retryMs`). Must not throw. */
  readonly failed?: (error: unknown) => void
}

/** The listener. @internal */
export interface ChannelListener {
  /**
   * Keeps a connection listening until the returned function is called: the connection is opened
   * with the first hold and given back to the pool after the last one ends.
   */
  hold(): () => void
  /** Gives the connection back and stops reconnecting; nothing is heard any more. */
  close(): Promise<void>
}

/** How long giving the connection back may wait for its `UNLISTEN`. */
const UNLISTEN_TIMEOUT_MS = 5000

/** One checked-out connection and whether it went back to the pool yet. */
interface Connection {
  readonly client: ListeningClient
  released: boolean
  readonly onNotification: (message: PgNotification) => void
  readonly onError: (error: Error) => void
}

/**
 * Creates the listener; it connects nothing until the first hold.
 *
 * @param options - the pool, the channel, the reconnect delay and the callbacks
 * @returns the listener
 * @internal
 */
export function createChannelListener(options: ChannelListenerOptions): ChannelListener {
  const { pool, channel, retryMs } = options
  // Yoke's channels are plain lower-case names, written as they are (as pg_stat_activity shows them).
  const quoted = /^[a-z_][a-z0-9_]*$/.test(channel) ? channel : quoteIdentifier(channel)
  let holds = 0
  let current: Connection | undefined
  let connecting: Promise<void> | undefined
  let retry: ReturnType<typeof setTimeout> | undefined
  let closed = false
  /** Connections being given back, so `close` can wait for them. */
  const retiring = new Set<Promise<void>>()

  const wanted = (): boolean => !closed && holds > 0

  const onNotification = (message: PgNotification): void => {
    if (message.channel === channel) options.heard(message.payload)
  }

  /** Gives a connection back: healthy after `UNLISTEN`, or closed by the pool when it failed. */
  const release = (connection: Connection, error?: Error): void => {
    if (connection.released) return
    connection.released = true
    connection.client.removeListener('notification', connection.onNotification)
    connection.client.removeListener('error', connection.onError)
    connection.client.release(error ?? false)
  }

  const retire = (connection: Connection): Promise<void> => {
    if (current === connection) current = undefined
    connection.client.removeListener('notification', connection.onNotification)
    // Given back to the pool for other queries, so it must stop listening first; its 'error'
    // listener stays until then, since an unheard 'error' would end the process.
    // A connection that died without a word would never answer: after a while it is closed instead.
    let timer: ReturnType<typeof setTimeout> | undefined
    const silent = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        release(connection, new Error(`UNLISTEN got no answer in ${UNLISTEN_TIMEOUT_MS} ms`))
        resolve()
      }, UNLISTEN_TIMEOUT_MS)
      timer.unref?.()
    })
    const unlistened = connection.client.query(`UNLISTEN ${quoted}`).then(
      () => release(connection),
      (error: unknown) => release(connection, error instanceof Error ? error : new Error(String(error))),
    )
    const done = Promise.race([unlistened, silent]).finally(() => {
      clearTimeout(timer)
      retiring.delete(done)
    })
    retiring.add(done)
    return done
  }

  const failed = (error: unknown): void => {
    if (!closed) options.failed?.(error)
  }

  const scheduleRetry = (): void => {
    if (!wanted() || retry !== undefined) return
    retry = setTimeout(() => {
      retry = undefined
      ensure()
    }, retryMs)
    retry.unref?.()
  }

  const connect = async (): Promise<void> => {
    let client: ListeningClient
    try {
      client = (await pool.connect()) as ListeningClient
    } catch (error) {
      failed(error)
      scheduleRetry()
      return
    }
    const connection: Connection = {
      client,
      released: false,
      onNotification,
      onError: (error) => {
        const wasCurrent = current === connection
        if (wasCurrent) current = undefined
        release(connection, error)
        if (wasCurrent) {
          failed(error)
          // Announcements until a new connection listens are not heard: the holder looks again.
          options.listening()
          scheduleRetry()
        }
      },
    }
    client.on('error', connection.onError)
    client.on('notification', onNotification)
    try {
      await client.query(`LISTEN ${quoted}`)
    } catch (error) {
      release(connection, error instanceof Error ? error : new Error(String(error)))
      failed(error)
      scheduleRetry()
      return
    }
    if (connection.released) return
    current = connection
    // What was committed before LISTEN took effect was announced to nobody: look again.
    options.listening()
    if (!wanted()) await retire(connection)
  }

  const ensure = (): void => {
    if (!wanted() || current !== undefined || connecting !== undefined || retry !== undefined) return
    connecting = connect().finally(() => {
      connecting = undefined
      // A connection that failed while it was being set up: try again later.
      if (wanted() && current === undefined) scheduleRetry()
    })
  }

  return {
    hold() {
      holds++
      ensure()
      let held = true
      return () => {
        if (!held) return
        held = false
        holds--
        if (holds === 0 && current !== undefined) void retire(current)
      }
    },
    async close() {
      closed = true
      holds = 0
      if (retry !== undefined) clearTimeout(retry)
      retry = undefined
      await connecting
      if (current !== undefined) void retire(current)
      await Promise.all([...retiring])
    },
  }
}
