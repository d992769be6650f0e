/**
 * How the SQL store's statements are spelled for PostgreSQL.
 *
 * @module
 */
import type { SqlDialect } from '../persistence/sql/sql-executor.js'

/**
 * The database's clock in whole milliseconds. `clock_timestamp()`, not `now()`: `now()` is frozen
 * at the start of the transaction, and a transaction that waited on a row lock would judge a lease
 * by a time already past.
 */
const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint'

/**
 * The PostgreSQL dialect for tables in `schema`.
 *
 * @param schema - a plain identifier (checked by the factory); it is quoted, so its case is kept
 * @returns the dialect
 * @internal
 */
export function postgresDialect(schema: string): SqlDialect {
  return Object.freeze({
    name: 'postgres',
    placeholder: (index: number) => `$${index}`,
    table: (name: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`,
    nowMs: NOW_MS,
    bigint: 'bigint',
    text: 'text',
    forUpdate: 'FOR UPDATE',
    migrationLock: migrationLockOf(schema),
    singleStatementAppend: true,
  })
}

/** The first key of Yoke's advisory locks: "yoke" in ASCII, so other applications' keys rarely meet it. */
const LOCK_CLASS = 0x796f6b65

/**
 * The statement that takes the transaction-scoped advisory lock of `schema`'s migrations: held
 * until the transaction ends, so instances starting together create and migrate one at a time.
 *
 * @param schema - the schema
 * @returns the statement
 * @internal
 */
export function migrationLockOf(schema: string): string {
  return `SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${quoteLiteral(schema)}))`
}

/** A string literal for PostgreSQL (standard_conforming_strings: only quotes are doubled). */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

/**
 * An identifier quoted for PostgreSQL: in double quotes, inner double quotes doubled.
 *
 * @param name - the identifier
 * @returns the quoted identifier
 * @internal
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
