import { test } from 'vitest'
import { runPersistenceConformance } from '../../src/testing/run-persistence-conformance.js'
import { vitestRunner } from './conformance-helpers.js'
import { sqliteTarget } from './sqlite-target.js'

runPersistenceConformance('sqlitePersistence conformance', () => sqliteTarget(), {
  runner: {
    ...vitestRunner,
    // A SQL store has no byte-level tails: the cases that cut or rewrite a log's bytes are
    // file-format cases and skip with their reason. A case missing any other hook fails.
    skip: (name, reason) =>
      /\bbytes\b/.test(reason) ? test.skip(`${name} (${reason})`, () => {}) : vitestRunner.skip?.(name, reason),
  },
})
