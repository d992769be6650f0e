/**
 * The PostgreSQL adapter passes the persistence conformance suite on a real server, each test in a
 * schema of its own. The suite's byte-level cases (a torn tail at every offset, damaged headers
 * written as bytes) are about file formats: a SQL store has no bytes hook and they are skipped with
 * that reason; any other skip fails.
 */
import { describe, test } from 'vitest'
import { type ConformanceRunner, runPersistenceConformance } from '../../src/testing/run-persistence-conformance.js'
import { skipPostgres } from '../helpers/postgres.js'
import { postgresTarget } from './postgres-target.js'

/** vitest, where only the cases that need raw log bytes may be skipped. */
const runner: ConformanceRunner = {
  describe: (name, body) => describe(name, body),
  test: (name, body, timeoutMs) => test(name, body, timeoutMs),
  skip: (name, reason) => {
    if (/\bbytes\b/.test(reason)) test.skip(`${name} (${reason})`, () => {})
    else
      test(name, () => {
        throw new Error(`the PostgreSQL target must provide this hook: ${reason}`)
      })
  },
}

// Registering makes one target (a schema on the server): with the PostgreSQL tests skipped there is none.
if (skipPostgres) describe.skip('postgresPersistence conformance (YOKE_TEST_POSTGRES=skip)', () => {})
else runPersistenceConformance('postgresPersistence conformance', () => postgresTarget('conformance'), { runner })
