import { afterAll } from 'vitest'
import { runPersistenceConformance } from '../../src/testing/run-persistence-conformance.js'
import { vitestRunnerWithoutBytes } from './conformance-helpers.js'
import { removeSqlWriter } from './sql-writer.js'
import { sqliteTarget } from './sqlite-target.js'

afterAll(removeSqlWriter)

// A SQL store has no byte-level tails: the cases that cut or rewrite a log's bytes are
// file-format cases and skip with their reason. A case missing any other hook fails.
runPersistenceConformance('sqlitePersistence conformance', () => sqliteTarget(), { runner: vitestRunnerWithoutBytes })
