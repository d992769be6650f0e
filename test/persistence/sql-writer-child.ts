/**
 * The writer child of the SQLite and PostgreSQL conformance targets (`spawnWriter`): the
 * conformance suite's writer protocol over a database file or a PostgreSQL schema.
 *
 * Argument: a JSON {@link SqlWriterStorage}.
 */
import { createHarness } from 'yoke'
import { serveConformanceWriter } from 'yoke/testing'
import { postgresPersistence } from '../../src/postgres/postgres-persistence.js'
import { sqlitePersistence } from '../../src/sqlite/sqlite-persistence.js'

/** Which store the child writes to, and where. */
export type SqlWriterStorage =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema: string }

const storage = JSON.parse(process.argv[2] ?? '{}') as SqlWriterStorage

await serveConformanceWriter({
  adapter: ({ lease }) =>
    storage.kind === 'sqlite'
      ? sqlitePersistence({ path: storage.path, lease })
      : postgresPersistence({ connectionString: storage.connectionString, schema: storage.schema, lease }),
  createHarness,
})
