/**
 * One `LISTEN` connection shared by every tail of a process: it hears the notifications committed
 * appends send and wakes the tails of the sessions they name. A connection that drops is replaced,
 * and every tail is woken then, since what was announced while nobody listened is lost.
 *
 * @module
 */
import { APPEND_CHANNEL, parseAppendNotification } from './append-notification.js'
import { createChannelListener } from './channel-listener.js'
import type { PgPool } from './pg-pool.js'

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
  let release: (() => void) | undefined

  const wakeAll = (): void => {
    for (const wakes of subscribers.values()) for (const wake of wakes) wake(undefined)
  }

  const channel = createChannelListener({
    pool,
    channel: APPEND_CHANNEL,
    retryMs,
    heard: (payload) => {
      const notice = parseAppendNotification(payload)
      if (notice === undefined || notice.schema !== schema) return
      if (notice.sessionId === undefined) {
        wakeAll()
        return
      }
      const wakes = subscribers.get(notice.sessionId)
      if (wakes !== undefined) for (const wake of wakes) wake(notice.nextSeq)
    },
    // Appends announced while nobody listened were not heard: every tail reads again.
    listening: wakeAll,
  })

  return {
    subscribe(sessionId, wake) {
      let wakes = subscribers.get(sessionId)
      if (wakes === undefined) subscribers.set(sessionId, (wakes = new Set()))
      wakes.add(wake)
      release ??= channel.hold()
      let subscribed = true
      return () => {
        if (!subscribed) return
        subscribed = false
        wakes.delete(wake)
        if (wakes.size === 0 && subscribers.get(sessionId) === wakes) subscribers.delete(sessionId)
        if (subscribers.size === 0) {
          release?.()
          release = undefined
        }
      }
    },
    async close() {
      subscribers.clear()
      release = undefined
      await channel.close()
    },
  }
}
