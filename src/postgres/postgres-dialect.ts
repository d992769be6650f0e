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
  })
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
