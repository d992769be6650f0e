/**
 * The options of `createPostgresTail` and of each tail, and their checks.
 *
 * @module
 */
import type { ValidationIssue } from '../errors/issue.js'
import { checkOptionsArgument, optionIssues, optionRule, throwOptionIssues } from '../kernel/option-issues.js'
import { assertStorableId } from '../persistence/session-file-name.js'
import type { PgPool } from './pg-pool.js'
import { connectionRules } from './postgres-persistence-options.js'
import type { SessionTailOptions, TailStart } from './session-tail.js'

/** Options of `createPostgresTail`. Exactly one of `pool` / `connectionString`. */
export interface PostgresTailOptions {
  /**
   * A `pg` pool the application owns. Each read checks a connection out for just that read; the
   * shared `LISTEN` connection stays checked out while any tail is open. Closing the factory
   * leaves the pool open.
   */
  readonly pool?: PgPool
  /** Where to connect: the factory opens a pool of its own and ends it on close. */
  readonly connectionString?: string
  /**
   * The schema holding Yoke's tables, as given to `postgresPersistence`.
   *
   * @defaultValue 'public'
   */
  readonly schema?: string
  /**
   * Whether tails are woken by the notifications appends send (`LISTEN` on one connection shared
   * by every tail of the factory). `false` reads by polling alone, every `pollMs`: for a
   * connection through a transaction-pooling proxy (PgBouncer's transaction mode), where `LISTEN`
   * does not work.
   *
   * @defaultValue true
   */
  readonly listen?: boolean
  /**
   * How often each tail reads the log when nothing woke it, in milliseconds, and how long to
   * wait before trying again after a failed read or a lost `LISTEN` connection.
   *
   * @defaultValue 1000 with `listen: false`, else 5000
   */
  readonly pollMs?: number
}

/** The checked factory options. @internal */
export interface ValidatedTailOptions {
  readonly pool: PgPool | undefined
  readonly connectionString: string | undefined
  readonly schema: string
  readonly listen: boolean
  readonly pollMs: number
}

const positiveMs = (value: unknown): string | undefined =>
  Number.isSafeInteger(value) && (value as number) > 0 ? undefined : 'must be a positive safe integer (milliseconds)'

const factoryRules = Object.freeze({
  ...connectionRules,
  listen: optionRule.boolean,
  pollMs: positiveMs,
})

/**
 * Checks the options of `createPostgresTail` and fills the defaults.
 *
 * @param options - what the caller passed
 * @returns the checked options
 * @throws `InvalidOptionsError` naming the first bad option
 * @internal
 */
export function validateTailOptions(options: PostgresTailOptions): ValidatedTailOptions {
  const issues: ValidationIssue[] = optionIssues(
    options ?? null,
    factoryRules,
    '{ pool | connectionString, schema?, listen?, pollMs? }',
  )
  if (issues.length === 0) {
    if (options.pool !== undefined && options.connectionString !== undefined)
      issues.push({ path: ['pool'], message: 'give either pool or connectionString, not both' })
    if (options.pool === undefined && options.connectionString === undefined)
      issues.push({ path: ['connectionString'], message: 'is required (or give a pool)' })
  }
  throwOptionIssues(issues, options, 'createPostgresTail options')
  const listen = options.listen ?? true
  return {
    pool: options.pool,
    connectionString: options.connectionString,
    schema: options.schema ?? 'public',
    listen,
    pollMs: options.pollMs ?? (listen ? 5000 : 1000),
  }
}

const seqRule = (value: unknown): string | undefined =>
  Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : 'must be a non-negative safe integer (a seq)'

const tailRules = Object.freeze({
  fromSeq: seqRule,
  lastEventId: (value: unknown) =>
    value === null || typeof value === 'string' || typeof value === 'number'
      ? undefined
      : 'must be a string, a number or null (the Last-Event-ID header)',
  signal: optionRule.signal,
  until: (value: unknown) => (value === 'turn-end' || value === 'abort' ? undefined : "must be 'turn-end' or 'abort'"),
  pollMs: positiveMs,
  waitForSession: optionRule.boolean,
})

/**
 * Checks the arguments of one `tail` call.
 *
 * @param sessionId - the session to tail
 * @param options - the tail's options
 * @param pollMs - the factory's poll interval, the default
 * @returns the checked start
 * @throws `PersistenceError` `INVALID_SESSION_ID` for an id no adapter stores; `InvalidArgumentError`
 *   naming the first bad option (`options.fromSeq` …)
 * @internal
 */
export function validateTailStart(
  sessionId: string,
  options: SessionTailOptions | undefined,
  pollMs: number,
): TailStart {
  assertStorableId(sessionId)
  const checked = checkOptionsArgument(
    options,
    tailRules,
    '{ fromSeq?, lastEventId?, signal?, until?, pollMs?, waitForSession? }',
  )
  const { lastEventId } = checked
  return {
    sessionId,
    start: lastEventId === undefined || lastEventId === null ? { fromSeq: checked.fromSeq ?? 0 } : { lastEventId },
    until: checked.until ?? 'abort',
    pollMs: checked.pollMs ?? pollMs,
    signal: checked.signal,
    waitForSession: checked.waitForSession ?? false,
  }
}
