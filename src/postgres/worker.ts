/**
 * `createWorker`: a process that drives the sessions of a PostgreSQL schema, as many as its
 * `concurrency`, alongside any number of other workers on any number of machines.
 *
 * @module
 */
import { createHarness } from '../harness/create-harness.js'
import type { Harness } from 'yoke'
import { randomHex } from '../persistence/random-hex.js'
import { type ChannelListener, createChannelListener } from './channel-listener.js'
import { postgresHandleOf, type PostgresStarted } from './postgres-handle.js'
import { SessionDriver } from './session-driver.js'
import { checkWorkerOptions, type WorkerOptions } from './worker-options.js'
import { WorkerQueries } from './worker-queries.js'

export type { WorkerOptions } from './worker-options.js'

/** Options of {@link Worker.close}. */
export interface WorkerCloseOptions {
  /**
   * How long running (and already queued) turns may take to finish, in milliseconds; then they
   * end aborted `{ kind: 'disposed' }` (the next owner sees a closed turn, not a crash). Messages
   * still in the inbox are left for other workers, which take them at once.
   *
   * @defaultValue 0
   */
  readonly drainMs?: number
}

/**
 * A running worker. Sessions move to another worker when this one dies (its leases expire) or
 * closes (its leases are released at once).
 */
export interface Worker {
  /** This worker's name, as its claims carry it. */
  readonly id: string
  /** The worker's harness: its agents, events (`harness.on(…)`) and sessions. */
  readonly harness: Harness
  /** The sessions this worker drives now. */
  readonly driving: readonly string[]
  /** How many inbox messages this worker has handed to agents so far. */
  readonly delivered: number
  /** Looks for runnable sessions now instead of at the next poll. */
  poll(): void
  /**
   * Drains and stops: claims nothing more, lets running turns finish up to `drainMs`, disposes
   * its agents (releasing their leases, so another worker takes their sessions at once), stops
   * listening and closes the harness (and so the adapter). Idempotent.
   *
   * @param options - `drainMs`
   * @returns resolves once everything is closed
   */
  close(options?: WorkerCloseOptions): Promise<void>
}

/**
 * Creates and starts a worker: its harness, a connection listening for submits (unless
 * `listen: false`), polling every `pollMs` and sweeping every `sweepMs`. Each session it claims
 * (`FOR UPDATE SKIP LOCKED` on the runnable table) it opens through the harness, which takes the
 * session's lease: the lease, judged on the database's clock, is what keeps every session to one
 * worker at a time.
 *
 * @example
 * ```ts
 * import { createWorker, postgresPersistence } from 'yoke/postgres'
 *
 * const worker = await createWorker({
 *   model,
 *   tools: [searchTool],
 *   persistence: postgresPersistence({ connectionString: process.env.DATABASE_URL, schema: 'agents' }),
 *   concurrency: 16,
 * })
 * process.on('SIGTERM', () => void worker.close({ drainMs: 20_000 }))
 * ```
 *
 * @param options - the harness options, `persistence` (a `postgresPersistence` adapter) and the worker's own
 * @returns the started worker
 * @throws (as a rejection) `InvalidOptionsError` naming a bad option (or `persistence` that is not
 *   a `postgresPersistence` adapter); what `createHarness` rejects with; the adapter's error when
 *   the database cannot be reached or migrated (nothing is left running)
 */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const checked = checkWorkerOptions(options)
  const handle = postgresHandleOf(options.persistence, 'createWorker options')
  const harness = await createHarness({ ...checked.harness, persistence: options.persistence })
  let started: PostgresStarted
  try {
    started = await handle.start()
  } catch (error) {
    await harness.close().catch(() => undefined)
    throw error
  }
  const worker = new RunningWorker({ checked, harness, started, id: checked.id ?? `worker-${randomHex(6)}` })
  worker.start()
  return worker
}

interface RunningWorkerInit {
  readonly checked: ReturnType<typeof checkWorkerOptions>
  readonly harness: Harness
  readonly started: PostgresStarted
  readonly id: string
}

class RunningWorker implements Worker {
  readonly id: string
  readonly harness: Harness
  readonly #checked: RunningWorkerInit['checked']
  readonly #started: PostgresStarted
  readonly #queries: WorkerQueries
  readonly #drivers = new Map<string, SessionDriver>()
  readonly #runs = new Set<Promise<unknown>>()
  readonly #listener: ChannelListener | undefined
  #delivered = 0
  #pollTimer: ReturnType<typeof setInterval> | undefined
  #sweepTimer: ReturnType<typeof setInterval> | undefined
  #filling: Promise<void> | undefined
  #again = false
  #closing: Promise<void> | undefined

  constructor(init: RunningWorkerInit) {
    this.id = init.id
    this.harness = init.harness
    this.#checked = init.checked
    this.#started = init.started
    this.#queries = new WorkerQueries(init.started.executor, init.started.tables)
    this.#listener = init.checked.listen
      ? createChannelListener({
          pool: init.started.pool,
          channel: init.started.tables.channel,
          // A submit's payload is its session id.
          heard: (sessionId) => {
            if (sessionId !== undefined && sessionId !== '') this.#notified(sessionId)
          },
          // Submits made while nobody listened were not heard: look for work now.
          listening: () => this.poll(),
          failed: (error) => this.#report(error, undefined),
          retryMs: init.checked.pollMs,
        })
      : undefined
  }

  get driving(): readonly string[] {
    return Object.freeze([...this.#drivers.keys()])
  }

  get delivered(): number {
    return this.#delivered
  }

  start(): void {
    this.#listener?.hold()
    this.#pollTimer = setInterval(() => this.poll(), this.#checked.pollMs)
    this.#sweepTimer = setInterval(() => void this.#sweep(), this.#checked.sweepMs)
    this.poll()
  }

  poll(): void {
    if (this.#closing !== undefined) return
    if (this.#filling !== undefined) {
      this.#again = true
      return
    }
    this.#filling = this.#fill().finally(() => {
      this.#filling = undefined
      if (this.#again) {
        this.#again = false
        this.poll()
      }
    })
  }

  close(options: WorkerCloseOptions = {}): Promise<void> {
    this.#closing ??= this.#close(options.drainMs ?? 0)
    return this.#closing
  }

  async #close(drainMs: number): Promise<void> {
    clearInterval(this.#pollTimer)
    clearInterval(this.#sweepTimer)
    await this.#filling?.catch(() => undefined)
    const deadline = Date.now() + drainMs
    for (const driver of this.#drivers.values()) driver.stop(deadline)
    await Promise.allSettled([...this.#runs])
    await this.#listener?.close()
    await this.harness.close()
  }

  /** Claims sessions while there is room, and starts a driver for each. */
  async #fill(): Promise<void> {
    try {
      const room = this.#checked.concurrency - this.#drivers.size
      if (room <= 0) return
      const claimMs = this.#started.leaseTtlMs
      const claimed = await this.#queries.claim(this.id, claimMs, [...this.#drivers.keys()], room)
      if (this.#closing !== undefined) {
        for (const sessionId of claimed) await this.#queries.unclaim(sessionId, this.id).catch(() => undefined)
        return
      }
      for (const sessionId of claimed) this.#drive(sessionId)
      // A full batch may mean more is waiting.
      if (claimed.length === room && room > 0) this.#again = true
    } catch (error) {
      this.#report(error, undefined)
    }
  }

  #drive(sessionId: string): void {
    const driver = new SessionDriver(sessionId, {
      harness: this.harness,
      queries: this.#queries,
      started: this.#started,
      workerId: this.id,
      pollMs: this.#checked.pollMs,
      overrides: this.#checked.agent,
      report: (error, id) => this.#report(error, id),
      delivered: () => {
        this.#delivered++
      },
    })
    this.#drivers.set(sessionId, driver)
    const run = driver.run().finally(() => {
      this.#drivers.delete(sessionId)
      this.#runs.delete(run)
      // A slot came free.
      this.poll()
    })
    this.#runs.add(run)
  }

  #notified(sessionId: string): void {
    const driver = this.#drivers.get(sessionId)
    if (driver !== undefined) driver.notify()
    else this.poll()
  }

  async #sweep(): Promise<void> {
    if (this.#closing !== undefined) return
    try {
      const swept = await this.#queries.sweep()
      if (swept.length > 0) this.poll()
    } catch (error) {
      this.#report(error, undefined)
    }
  }

  #report(error: unknown, sessionId: string | undefined): void {
    try {
      if (this.#checked.onError !== undefined) this.#checked.onError(error, sessionId)
      else
        this.harness.ctx.logger.warn('yoke worker: a step failed', {
          worker: this.id,
          ...(sessionId === undefined ? {} : { sessionId }),
          error,
        })
    } catch {
      // A reporter must not throw; if it does, the worker goes on.
    }
  }
}
