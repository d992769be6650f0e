/**
 * The tables of the SQL store and their versioned migrations, run on start in one transaction.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { SessionFormatUnsupportedError } from '../../errors/session-format-unsupported-error.js'
import type { SqlExecutor, SqlQuery } from './sql-executor.js'
import type { SqlExtension } from './sql-extension.js'
import { sqlInteger } from './sql-integer.js'
import type { SqlStatements } from './sql-statements.js'

/** The schema version this Yoke writes and reads. */
export const SQL_SCHEMA_VERSION = 1

/** One migration step: the statements that take the schema from the version before it to its own. */
type Migration = (statements: SqlStatements) => readonly string[]

/**
 * The migrations, index `i` taking the schema to version `i + 1`. A released step never changes:
 * a new schema is a new step.
 */
const migrations: readonly Migration[] = [
  ({ dialect, tables }) => {
    const { bigint, text } = dialect
    return [
      // The JSON text of the header: text, never a JSON type, so the stored bytes stay exact.
      // `batch_seq` is where the last append started.
      `CREATE TABLE ${tables.sessions} (id ${text} PRIMARY KEY, header ${text} NOT NULL, next_seq ${bigint} NOT NULL, batch_seq ${bigint} NOT NULL, revision ${text} NOT NULL, created_at ${bigint} NOT NULL)`,
      // One row per event, or per packed chunk run (`seq` its first member, `last_seq` its last).
      `CREATE TABLE ${tables.events} (session ${text} NOT NULL, seq ${bigint} NOT NULL, last_seq ${bigint} NOT NULL, body ${text} NOT NULL, PRIMARY KEY (session, seq))`,
      // A released lease keeps its row (token '') so the epoch only ever grows.
      `CREATE TABLE ${tables.leases} (session ${text} PRIMARY KEY, owner ${text} NOT NULL, token ${text} NOT NULL, epoch ${bigint} NOT NULL, pid ${bigint} NOT NULL, host ${text} NOT NULL, acquired_at ${bigint} NOT NULL, heartbeat_at ${bigint} NOT NULL, ttl_ms ${bigint} NOT NULL)`,
      // Rows a repair of damage moved aside, with the revision they were read at.
      `CREATE TABLE ${tables.quarantine} (session ${text} NOT NULL, seq ${bigint} NOT NULL, last_seq ${bigint} NOT NULL, body ${text} NOT NULL, quarantined_at ${bigint} NOT NULL, revision ${text} NOT NULL, PRIMARY KEY (session, revision, seq))`,
    ]
  },
]

async function storedVersion(tx: SqlQuery, statements: SqlStatements): Promise<number> {
  const rows = await tx.query(`SELECT MAX(version) AS version FROM ${statements.tables.schema}`)
  const version = rows[0]?.['version']
  return version === null || version === undefined ? 0 : sqlInteger(version, 'yoke_schema.version')
}

/**
 * Brings the database to {@link SQL_SCHEMA_VERSION} in one transaction: creates the version table
 * when absent, then runs the steps after the stored version. A schema from a newer Yoke is refused
 * before anything is written (the transaction rolls back, so not even the version table stays).
 *
 * @param executor - the database
 * @param statements - the statements of its dialect
 * @param location - where the schema is, for the error
 * @param extension - a driver's own tables, migrated last in the same transaction
 * @throws `SessionFormatUnsupportedError` `SCHEMA_TOO_NEW` naming both versions
 * @internal
 */
export async function migrateSqlSchema(
  executor: SqlExecutor,
  statements: SqlStatements,
  location: string,
  extension?: SqlExtension,
): Promise<void> {
  await executor.transaction(async (tx) => {
    const lock = statements.dialect.migrationLock
    if (lock !== undefined) await tx.query(lock)
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${statements.tables.schema} (version ${statements.dialect.bigint} NOT NULL)`,
    )
    const version = await storedVersion(tx, statements)
    if (version > SQL_SCHEMA_VERSION) {
      throw new SessionFormatUnsupportedError({
        code: ErrorCode.SCHEMA_TOO_NEW,
        detail: `the database schema (${location}) is version ${version}, newer than the version ${SQL_SCHEMA_VERSION} this Yoke reads; upgrade Yoke to use it (nothing was written)`,
        storedVersion: version,
        supportedVersion: SQL_SCHEMA_VERSION,
        direction: 'newer',
        location,
      })
    }
    if (version === SQL_SCHEMA_VERSION) {
      await extension?.migrate(tx)
      return
    }
    for (let step = version; step < SQL_SCHEMA_VERSION; step++) {
      for (const statement of migrations[step]!(statements)) await tx.query(statement)
    }
    await tx.query(`DELETE FROM ${statements.tables.schema}`)
    await tx.query(statements.bind(`INSERT INTO ${statements.tables.schema} (version) VALUES (?)`), [
      SQL_SCHEMA_VERSION,
    ])
    await extension?.migrate(tx)
  })
}
