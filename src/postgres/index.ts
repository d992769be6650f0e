/**
 * `yoke/postgres`: session storage in PostgreSQL. Needs the optional peer `pg` (`npm install pg`).
 *
 * @module
 */
export type { PgPool, PgPoolClient, PgQueryResult } from './pg-pool.js'
export { type PostgresPersistenceOptions, postgresPersistence } from './postgres-persistence.js'
