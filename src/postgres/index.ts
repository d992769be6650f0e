/**
 * `yoke/postgres`: session storage in PostgreSQL, and tails of its sessions readable from any
 * process. Needs the optional peer `pg` (`npm install pg`).
 *
 * @module
 */
export type { PgPool, PgPoolClient, PgQueryResult } from './pg-pool.js'
export { type PostgresPersistenceOptions, postgresPersistence } from './postgres-persistence.js'
export { createPostgresTail, type PostgresTail, type PostgresTailOptions } from './postgres-tail.js'
export type { SessionTail, SessionTailOptions, SessionTailUntil } from './session-tail.js'
