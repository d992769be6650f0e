/**
 * The `spawnWriter` hook of the SQLite and PostgreSQL conformance targets: one child script
 * (`sql-writer-child.ts`) for both stores, bundled once per test file on first use (a bundle starts
 * far faster than tsx).
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { type Bundle, bundle } from '../helpers/child-process.js'
import type { SqlWriterStorage } from './sql-writer-child.js'

let writerChild: Promise<Bundle> | undefined

/**
 * Starts a writer child over `storage`, with stdin, stdout and stderr as pipes.
 *
 * @param storage - the store and where it is
 * @returns the child process
 */
export async function spawnSqlWriter(storage: SqlWriterStorage): Promise<ChildProcess> {
  // The drivers stay outside the bundle: better-sqlite3 is a native module, and both are loaded
  // the way an application loads them, from node_modules.
  writerChild ??= bundle('test/persistence/sql-writer-child.ts', { external: ['better-sqlite3', 'pg'] })
  const { file } = await writerChild
  // Without vitest's loader options: the bundle is plain JavaScript.
  const { NODE_OPTIONS: _loader, ...env } = process.env
  return spawn(process.execPath, [file, JSON.stringify(storage)], { stdio: ['pipe', 'pipe', 'pipe'], env })
}

/** Removes the bundle, if one was made (call it in `afterAll`). */
export async function removeSqlWriter(): Promise<void> {
  const made = writerChild
  writerChild = undefined
  await (await made?.catch(() => undefined))?.remove()
}
