/**
 * The storage a command opens from its flags: the JSONL logs of `--dir` (the default), a SQLite
 * database file (`--sqlite <file>`) or a PostgreSQL database (`--postgres <url>`, with
 * `--schema`). Commands that work on the adapter itself (`unlock`) open it here, so a new storage
 * flag is one branch in one place.
 *
 * @module
 */
import { jsonlPersistence } from '../persistence/jsonl/jsonl-persistence.js'
import type { PersistenceAdapter } from '../persistence/persistence-adapter.js'
import { postgresPersistence } from '../postgres/postgres-persistence.js'
import { sqlitePersistence } from '../sqlite/sqlite-persistence.js'

/** Where a command's sessions are stored, as its flags say. */
export type StoreFlags =
  /** The JSONL log directory (`--dir`, default `./sessions`). */
  | { readonly kind: 'jsonl'; readonly dir: string }
  /** A SQLite database file (`--sqlite`). */
  | { readonly kind: 'sqlite'; readonly path: string }
  /** A PostgreSQL connection string (`--postgres`) and schema (`--schema`, default `public`). */
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema?: string | undefined }

/**
 * Opens the adapter the flags name. Opening writes nothing (a database is connected by the first
 * call); close it when done.
 *
 * @param flags - the storage flags
 * @returns the adapter
 * @throws `MissingPeerError` when `--sqlite` or `--postgres` needs a driver that is not installed
 */
export function openStore(flags: StoreFlags): PersistenceAdapter {
  switch (flags.kind) {
    case 'jsonl':
      return jsonlPersistence({ dir: flags.dir })
    case 'sqlite':
      return sqlitePersistence({ path: flags.path })
    case 'postgres':
      return postgresPersistence({
        connectionString: flags.connectionString,
        ...(flags.schema === undefined ? {} : { schema: flags.schema }),
      })
  }
}
