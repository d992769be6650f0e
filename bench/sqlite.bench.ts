/**
 * SQLite benchmarks (`npm run bench -- sqlite`): `sqlitePersistence` against better-sqlite3 doing
 * the same work on the same database file in the same run (goal ≤ 1.5×). See `sql-bench.ts` for
 * the cases and how to read them.
 *
 * - Append: 10,000 events appended to a live session and flushed at the default write-behind, end
 *   to end and through `adapter.append` alone on the same batches, then one turn (10 events) per
 *   commit; vs better-sqlite3 inserting the same rows with the same `INSERT … VALUES` statements
 *   (200 rows each), `BEGIN IMMEDIATE … COMMIT` per batch.
 * - Load: `adapter.load` (and through the harness's coordinator) of a 100,000-event session, and
 *   `readFrom` of its last 10,000 events; vs a prepared `SELECT … ORDER BY seq` (`.all()`) and
 *   `JSON.parse` of every body.
 *
 * Both sides open the file with the adapter's defaults: WAL and `synchronous=FULL`, so every commit
 * waits for the disk. The file lives in the OS temp dir; on tmpfs a sync costs nothing and the
 * ratios grow, so the bench prints the file system it ran on.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sqlitePersistence } from 'yoke/sqlite'
import { rawSqlite } from './raw-sqlite.js'
import { runSqlBench } from './sql-bench.js'

/** The file system holding `dir`, as `df` names its type, or `unknown`. */
function fileSystemOf(dir: string): string {
  try {
    return execFileSync('df', ['--output=fstype', dir], { encoding: 'utf8' }).split('\n')[1]?.trim() ?? 'unknown'
  } catch {
    return 'unknown'
  }
}

/** Runs the SQLite figures in a temp dir removed afterwards; the ratios by case name. */
export async function runSqliteBench(): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-bench-sqlite-'))
  const path = join(dir, 'bench.db')
  console.log(`  (${path} on ${fileSystemOf(dir)}; WAL, synchronous=FULL on both sides)`)
  const raw = rawSqlite(path)
  try {
    return await runSqlBench({ label: 'SQLite', adapter: () => sqlitePersistence({ path }), raw })
  } finally {
    await raw.close()
    await rm(dir, { recursive: true, force: true })
  }
}
