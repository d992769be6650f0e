import { z } from 'zod'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { ClockKey } from '../kernel/host-keys.js'
import { PersistenceKey } from './persistence-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import { jsonlPersistence } from './jsonl/jsonl-persistence.js'
import { memoryPersistence } from './memory-persistence.js'
import type { PersistenceAdapter } from './persistence-adapter.js'
import { createPersistenceCoordinator } from './create-persistence-coordinator.js'
import { persistenceEvents } from './persistence-events.js'
import { writeBehindOptionsSchema } from './write-behind.js'
import { type Durability, durabilityValues } from './durability.js'

const adapterMethods = ['create', 'append', 'load', 'commitRepair', 'list', 'acquire', 'close'] as const

/** Whether `value` has the shape of a {@link PersistenceAdapter}. */
export function isPersistenceAdapter(value: unknown): value is PersistenceAdapter {
  if (typeof value !== 'object' || value === null) return false
  const record = value as Record<string, unknown>
  return typeof record['name'] === 'string' && adapterMethods.every((method) => typeof record[method] === 'function')
}

/** The `{ dir }` shorthand of `createHarness({ persistence })`: exactly `jsonlPersistence({ dir, compression })`. */
export interface JsonlShorthand {
  /** The directory of the session logs. */
  readonly dir: string
  /**
   * The codec of new files.
   *
   * @default 'none'
   */
  readonly compression?: 'none' | 'gzip' | 'zstd'
}

/** The config of the `persistence` entry. */
export interface PersistenceEntryConfig {
  /**
   * The storage backend, or `{ dir, compression? }` for `jsonlPersistence({ dir, compression })`.
   *
   * @default a fresh `memoryPersistence()`
   */
  readonly adapter?: PersistenceAdapter | JsonlShorthand
  /** Write-behind tuning: how long events may wait, and how many, before they are written. */
  readonly writeBehind?: {
    /**
     * The batching window.
     *
     * @default 200
     */
    readonly windowMs?: number
    /**
     * The pending-event high-water mark.
     *
     * @default 10000
     */
    readonly maxPendingEvents?: number
    /**
     * The pending-bytes high-water mark.
     *
     * @default 16 MiB
     */
    readonly maxPendingBytes?: number
  }
  /**
   * How long one storage call of a live session (its `create`, an `append`, a lease's
   * `acquire` or `release`, the adapter's `close`) may take before it counts as failed with
   * `PersistenceError` `WRITE_TIMEOUT`: an integer from 0 to 2147483647 milliseconds, `0` for
   * no timeout. The events stay queued and are retried; a call that completes after its timeout
   * is taken into account, so nothing is written twice.
   *
   * @default 30000
   */
  readonly writeTimeoutMs?: number
  /**
   * When live sessions sync: `'step'` at every checkpoint of a turn, `'turn'` only at its end
   * (see {@link Durability}).
   *
   * @default 'step'
   */
  readonly durability?: Durability
}

/** The write timeout of live-session storage calls when none is configured, in milliseconds. */
export const defaultWriteTimeoutMs = 30_000

const timeoutRule = 'must be an integer from 0 (no timeout) to 2147483647'
const durabilityRule = "must be 'step' or 'turn'"

const shorthandSchema = z.strictObject({
  dir: z.string().min(1, { error: 'must be a non-empty directory path' }),
  compression: z.enum(['none', 'gzip', 'zstd']).optional(),
})

const configSchema = z.strictObject({
  adapter: z
    .union([
      z.custom<PersistenceAdapter>(isPersistenceAdapter, { error: 'must be a PersistenceAdapter' }),
      shorthandSchema,
    ])
    .optional(),
  writeBehind: writeBehindOptionsSchema.optional(),
  writeTimeoutMs: z
    .number({ error: timeoutRule })
    .int({ error: timeoutRule })
    .min(0, { error: timeoutRule })
    .max(2_147_483_647, { error: timeoutRule })
    .optional(),
  durability: z.enum(durabilityValues as [Durability, ...Durability[]], { error: durabilityRule }).optional(),
})

function adapterOf(input: PersistenceAdapter | z.output<typeof shorthandSchema> | undefined): PersistenceAdapter {
  if (input === undefined) return memoryPersistence()
  if (isPersistenceAdapter(input)) return input
  return jsonlPersistence({
    dir: input.dir,
    ...(input.compression === undefined ? {} : { compression: input.compression }),
  })
}

/**
 * The `persistence` entry of the default bundle: builds the persistence coordinator
 * (`services.persistence`), binds every live session to write-behind, guards appends against
 * back-pressure, bounds every live storage call by the write timeout, and flushes and releases
 * everything when it stops.
 *
 * @returns a plugin definition
 */
export function persistencePlugin(): PluginDefinition<z.output<typeof configSchema> | undefined> {
  return definePlugin({
    name: 'persistence',
    inject: [SessionsKey],
    provides: [PersistenceKey],
    events: [persistenceEvents],
    config: configSchema.optional(),
    apply(ctx, config) {
      const sessions = ctx.get(SessionsKey)
      const coordinator = createPersistenceCoordinator({
        adapter: adapterOf(config?.adapter),
        writeBehind: writeBehindOptionsSchema.parse(config?.writeBehind ?? {}),
        writeTimeoutMs: config?.writeTimeoutMs ?? defaultWriteTimeoutMs,
        durability: config?.durability ?? 'step',
        clock: ctx.get(ClockKey),
        logger: ctx.logger,
        catalog: sessions.catalog,
        live: (id) => sessions.get(id),
        writeFailed: (sessionId, error, pendingEvents) =>
          ctx.emit('session/write-failed', { sessionId, error, pendingEvents }),
      })
      ctx.on('session/created', ({ session }) => coordinator.bind(session))
      ctx.on('session/event', ({ session, event }) => coordinator.record(session, event))
      ctx.on('session/flush', ({ session, checkpoint }) => coordinator.flushSession(session, checkpoint))
      ctx.on('session/disposed', ({ session, vetoed }) =>
        vetoed === true ? coordinator.discard(session) : coordinator.unbind(session),
      )
      sessions.addCommitGuard((event, session) => coordinator.guard(event, session), { label: 'persistence' })
      ctx.provide(PersistenceKey, coordinator)
      return () => coordinator.close()
    },
  })
}
