/**
 * `yoke/postgres`: session storage in PostgreSQL, and the workers that drive sessions from a
 * durable inbox across processes and machines. Needs the optional peer `pg` (`npm install pg`).
 *
 * @module
 */
export type { PgPool, PgPoolClient, PgQueryResult } from './pg-pool.js'
export { type PostgresPersistenceOptions, postgresPersistence } from './postgres-persistence.js'
export { createPostgresClient, type PostgresClient, type PostgresClientOptions } from './postgres-client.js'
export type { BusyPolicy, SubmitOptions, SubmitResult } from './submit-message.js'
export { createWorker, type Worker, type WorkerCloseOptions, type WorkerOptions } from './worker.js'
