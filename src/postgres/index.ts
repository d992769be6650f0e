/**
 * `yoke/postgres`: session storage in PostgreSQL, the workers that drive sessions from a durable
 * inbox across processes and machines, and tails of its sessions readable from any process. Needs
 * the optional peer `pg` (`npm install pg`).
 *
 * @module
 */
export type { PgPool, PgPoolClient, PgQueryResult } from './pg-pool.js'
export { type PostgresPersistenceOptions, postgresPersistence } from './postgres-persistence.js'
export { createPostgresClient, type PostgresClient, type PostgresClientOptions } from './postgres-client.js'
export type { BusyPolicy, SubmitOptions, SubmitResult } from './submit-message.js'
export { createWorker, type Worker, type WorkerCloseOptions, type WorkerOptions } from './worker.js'
export { createPostgresTail, type PostgresTail, type PostgresTailOptions } from './postgres-tail.js'
export type { SessionTail, SessionTailOptions, SessionTailUntil } from './session-tail.js'
