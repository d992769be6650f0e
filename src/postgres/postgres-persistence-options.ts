/**
 * The options of `postgresPersistence` and their check.
 *
 * @module
 */
import type { ValidationIssue } from '../errors/issue.js'
import { hasMethods, optionIssues, optionRule, throwOptionIssues } from '../kernel/option-issues.js'
import { type LeaseOptions, type LeaseTiming, leaseOptionsIssue, leaseTiming } from '../persistence/lease-options.js'
import type { PgPool } from './pg-pool.js'

/** Options of `postgresPersistence`. Exactly one of `pool` / `connectionString`. */
export interface PostgresPersistenceOptions {
  /**
   * A `pg` pool the application owns and may share with its own queries. Closing the adapter (or
   * the harness) leaves it open: ending it stays the application's job.
   */
  readonly pool?: PgPool
  /**
   * Where to connect (`postgresql://user:password@host:5432/database`): the adapter opens a pool
   * of its own (pg's defaults: up to 10 connections) and ends it on close.
   */
  readonly connectionString?: string
  /**
   * The schema holding Yoke's tables, created when absent. A plain identifier (letters, digits,
   * `_`, not starting with a digit); it is quoted, so `App` and `app` are different schemas.
   *
   * @defaultValue 'public'
   */
  readonly schema?: string
  /**
   * The lease timing, judged by the database's clock: a holder renews its lease every
   * `heartbeatMs`; a lease whose last heartbeat is `ttlMs` old may be taken over by any instance.
   * `ttlMs` must be greater than `heartbeatMs`.
   *
   * @defaultValue `{ ttlMs: 30000, heartbeatMs: 10000 }`
   */
  readonly lease?: LeaseOptions
  /**
   * Whether every committed append (and repair) is announced, so tails in any process
   * (`createPostgresTail`) hear of it at once: right after the commit, a `pg_notify` on channel
   * `yoke_append` with ids only (schema, session, next seq), in a short transaction of its own. Off,
   * tails still see every event, by polling every `pollMs`. It costs each append one more round
   * trip: turn it off on a write-heavy database whose sessions nobody tails.
   *
   * @defaultValue true
   */
  readonly notify?: boolean
}

/**
 * The checked options.
 *
 * @internal
 */
export interface ValidatedPostgresOptions {
  readonly pool: PgPool | undefined
  readonly connectionString: string | undefined
  readonly schema: string
  readonly lease: LeaseTiming
  readonly notify: boolean
}

/** A schema name Yoke accepts: an unquoted PostgreSQL identifier (at most 63 bytes). */
const plainIdentifier = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

const rules = Object.freeze({
  pool: (value: unknown) =>
    hasMethods(value, ['connect', 'query', 'end', 'on', 'removeListener'])
      ? undefined
      : 'must be a pg Pool (connect(), query(), end(), on(), removeListener())',
  connectionString: optionRule.nonEmptyString,
  schema: (value: unknown) =>
    typeof value === 'string' && plainIdentifier.test(value)
      ? undefined
      : 'must be a plain identifier: letters, digits and _, not starting with a digit, at most 63 characters',
  lease: leaseOptionsIssue,
  notify: optionRule.boolean,
})

/**
 * Checks the options of `postgresPersistence` and fills the defaults.
 *
 * @param options - what the caller passed
 * @returns the checked options
 * @throws `InvalidOptionsError` naming the first bad option: not an object, an unknown key, both or
 *   neither of `pool` / `connectionString`, a bad schema name, a lease TTL not above its heartbeat
 * @internal
 */
export function validatePostgresOptions(options: PostgresPersistenceOptions): ValidatedPostgresOptions {
  const shape = '{ pool | connectionString, schema?, lease?, notify? }'
  const issues: ValidationIssue[] = optionIssues(options ?? null, rules, shape)
  if (issues.length === 0) {
    if (options.pool !== undefined && options.connectionString !== undefined)
      issues.push({ path: ['pool'], message: 'give either pool or connectionString, not both' })
    if (options.pool === undefined && options.connectionString === undefined)
      issues.push({ path: ['connectionString'], message: 'is required (or give a pool)' })
  }
  throwOptionIssues(issues, options, 'postgresPersistence options')
  return {
    pool: options.pool,
    connectionString: options.connectionString,
    schema: options.schema ?? 'public',
    lease: leaseTiming(options.lease),
    notify: options.notify ?? true,
  }
}

/**
 * The rules of the connection options every `yoke/postgres` factory shares: `pool`,
 * `connectionString` and `schema`.
 *
 * @internal
 */
export const connectionRules = Object.freeze({
  pool: rules.pool,
  connectionString: rules.connectionString,
  schema: rules.schema,
})
