/**
 * The worker's `LISTEN` on its schema's inbox channel: one dedicated connection, opened again
 * after it drops.
 *
 * @module
 */
import type { PgPool, PgPoolClient } from './pg-pool.js'
import { quoteIdentifier } from './postgres-dialect.js'

/** A `pg` client as far as notifications go (not part of {@link PgPoolClient}: only this file listens). */
interface NotifyingClient extends PgPoolClient {
  on(event: 'notification', listener: (message: { readonly payload?: string }) => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'end', listener: () => void): unknown
}

/** What {@link InboxListener} needs. @internal */
export interface InboxListenerOptions {
  readonly pool: PgPool
  readonly channel: string
  /** Called with the session id of each notification. Must not throw. */
  readonly notify: (sessionId: string) => void
  /** Called when the connection drops or cannot be opened (it is tried again after `retryMs`). Must not throw. */
  readonly failed: (error: unknown) => void
  /** How long to wait before connecting again. */
  readonly retryMs: number
}

/**
 * Keeps one connection of the pool listening on the channel. While it is down the worker still
 * polls, so a lost notification costs at most one poll interval.
 *
 * @internal
 */
export class InboxListener {
  readonly #options: InboxListenerOptions
  #client: NotifyingClient | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  #closed = false
  readonly #released = new WeakSet<NotifyingClient>()

  /** @param options - the pool, the channel and the callbacks */
  constructor(options: InboxListenerOptions) {
    this.#options = options
  }

  /** Connects and listens; a failure is reported and tried again later (never thrown). */
  async start(): Promise<void> {
    if (this.#closed || this.#client !== undefined) return
    let client: NotifyingClient | undefined
    try {
      client = (await this.#options.pool.connect()) as NotifyingClient
      if (this.#closed) {
        client.release()
        return
      }
      const dropped = (error: Error): void => this.#dropped(client as NotifyingClient, error)
      client.on('error', dropped)
      client.on('end', () => dropped(new Error('the LISTEN connection ended')))
      client.on('notification', (message) => {
        if (typeof message.payload === 'string' && message.payload !== '') this.#options.notify(message.payload)
      })
      this.#client = client
      await client.query(`LISTEN ${quoteIdentifier(this.#options.channel)}`)
    } catch (error) {
      if (client !== undefined) this.#dropped(client, error instanceof Error ? error : new Error(String(error)))
      else this.#retry(error)
    }
  }

  /** Stops listening and gives the connection back (closed, not reused: it still listens). */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    const client = this.#client
    this.#client = undefined
    if (client === undefined || this.#released.has(client)) return
    this.#released.add(client)
    // Released with an error, so the pool closes it rather than handing out a listening connection.
    client.release(new Error('the worker closed its LISTEN connection'))
  }

  #dropped(client: NotifyingClient, error: Error): void {
    // An 'end' follows an 'error' for the same connection: only the first counts.
    if (this.#released.has(client)) return
    this.#released.add(client)
    if (this.#client === client) this.#client = undefined
    try {
      client.release(error)
    } catch {
      // The pool let go of it already.
    }
    this.#retry(error)
  }

  #retry(error: unknown): void {
    if (this.#closed) return
    this.#options.failed(error)
    if (this.#timer !== undefined) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      void this.start()
    }, this.#options.retryMs)
    this.#timer.unref?.()
  }
}
