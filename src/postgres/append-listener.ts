/**
 * One `LISTEN` connection shared by every tail of a process: it hears the notifications committed
 * appends send and wakes the tails of the sessions they name. A connection that drops is replaced,
 * and every tail is woken then, since what was announced while nobody listened is lost.
 *
 * @module
 */
import { APPEND_CHANNEL, parseAppendNotification } from './append-notification.js'
import type { PgPool, PgPoolClient } from './pg-pool.js'

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

/**
 * What a tail is told: the session's announced next seq, or `undefined` when it should simply
 * read again (a notification without an id, or a new connection that may have missed some).
 *
 * @internal
 */
export type AppendWake = (nextSeq: number | undefined) => void

/** The shared listener. @internal */
export interface AppendListener {
  /**
   * Wakes `wake` for every append announced for `sessionId`, from now until the returned function
   * is called. The connection is opened with the first subscription and given back to the pool
   * after the last one ends.
   */
  subscribe(sessionId: string, wake: AppendWake): () => void
  /** Gives the connection back and stops reconnecting; subscriptions hear nothing more. */
  close(): Promise<void>
}

/** What {@link createAppendListener} needs. @internal */
export interface AppendListenerOptions {
  /** Where the connection is checked out from (and given back to). */
  readonly pool: PgPool
  /** The schema whose appends to hear (notifications name theirs). */
  readonly schema: string
  /** How long to wait before connecting again after the connection failed. */
  readonly retryMs: number
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
 * Creates the listener; it connects nothing until the first subscription.
 *
 * @param options - the pool, the schema, the reconnect delay
 * @returns the listener
 * @internal
 */
export function createAppendListener(options: AppendListenerOptions): AppendListener {
  const { pool, schema, retryMs } = options
  const subscribers = new Map<string, Set<AppendWake>>()
  let current: Connection | undefined
  let connecting: Promise<void> | undefined
  let retry: ReturnType<typeof setTimeout> | undefined
  let closed = false
  /** Connections being given back, so `close` can wait for them. */
  const retiring = new Set<Promise<void>>()

  const wanted = (): boolean => !closed && subscribers.size > 0

  const wakeAll = (): void => {
    for (const wakes of subscribers.values()) for (const wake of wakes) wake(undefined)
  }

  const onNotification = (message: PgNotification): void => {
    if (message.channel !== APPEND_CHANNEL) return
    const notice = parseAppendNotification(message.payload)
    if (notice === undefined || notice.schema !== schema) return
    if (notice.sessionId === undefined) {
      wakeAll()
      return
    }
    const wakes = subscribers.get(notice.sessionId)
    if (wakes !== undefined) for (const wake of wakes) wake(notice.nextSeq)
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
    const unlistened = connection.client.query(`UNLISTEN ${APPEND_CHANNEL}`).then(
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
    } catch {
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
          // Appends announced until a new connection listens are not heard: every tail reads again.
          wakeAll()
          scheduleRetry()
        }
      },
    }
    client.on('error', connection.onError)
    client.on('notification', onNotification)
    try {
      await client.query(`LISTEN ${APPEND_CHANNEL}`)
    } catch (error) {
      release(connection, error instanceof Error ? error : new Error(String(error)))
      scheduleRetry()
      return
    }
    if (connection.released) return
    current = connection
    // What was committed before LISTEN took effect was announced to nobody: read again.
    wakeAll()
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
    subscribe(sessionId, wake) {
      let wakes = subscribers.get(sessionId)
      if (wakes === undefined) subscribers.set(sessionId, (wakes = new Set()))
      wakes.add(wake)
      ensure()
      let subscribed = true
      return () => {
        if (!subscribed) return
        subscribed = false
        wakes.delete(wake)
        if (wakes.size === 0 && subscribers.get(sessionId) === wakes) subscribers.delete(sessionId)
        if (subscribers.size === 0 && current !== undefined) void retire(current)
      }
    },
    async close() {
      closed = true
      subscribers.clear()
      if (retry !== undefined) clearTimeout(retry)
      retry = undefined
      await connecting
      if (current !== undefined) void retire(current)
      await Promise.all([...retiring])
    },
  }
}
