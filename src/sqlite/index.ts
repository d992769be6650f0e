/**
 * `yoke/sqlite`: session logs in a SQLite database file, on the optional peer better-sqlite3.
 *
 * @module
 */
export type { BetterSqlite3Database, BetterSqlite3Statement } from './better-sqlite3-database.js'
export { type SqlitePersistenceOptions, sqlitePersistence } from './sqlite-persistence.js'
