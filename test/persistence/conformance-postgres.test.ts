/**
 * The PostgreSQL adapter passes the persistence conformance suite on a real server, each test in a
 * schema of its own. The suite's byte-level cases (a torn tail at every offset, damaged headers
 * written as bytes) are about file formats: a SQL store has no bytes hook and they are skipped with
 * that reason; any other skip fails.
 */
import { afterAll, describe } from 'vitest'
import { runPersistenceConformance } from '../../src/testing/run-persistence-conformance.js'
import { skipPostgres } from '../helpers/postgres.js'
import { vitestRunnerWithoutBytes as runner } from './conformance-helpers.js'
import { postgresTarget } from './postgres-target.js'
import { removeSqlWriter } from './sql-writer.js'

afterAll(removeSqlWriter)

// Registering makes one target (a schema on the server): with the PostgreSQL tests skipped there is none.
if (skipPostgres) describe.skip('postgresPersistence conformance (YOKE_TEST_POSTGRES=skip)', () => {})
else runPersistenceConformance('postgresPersistence conformance', () => postgresTarget('conformance'), { runner })
