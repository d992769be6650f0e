/**
 * What the append notification costs (`postgresPersistence({ notify })`, on by default): the same
 * appends of one turn (10 events) per commit with `notify: true` and with `notify: false`, in the
 * same run, on the same server and schema, interleaved round by round and the best round kept.
 *
 * - one writer: 100 commits one after the other;
 * - 8 writers at once, 8 sessions of 100 commits each. PostgreSQL serializes the end of every
 *   commit that notifies (a database-wide lock, so listeners see notifications in commit order);
 *   the adapter notifies right after each append's commit, in a short transaction that does not
 *   wait for the disk, so the appends themselves still share WAL flushes. Against a server with
 *   `fsync=on` (`YOKE_BENCH_POSTGRES_URL`) this case shows whether they do.
 *
 * The ratio is how many times slower `notify: true` is than `notify: false`.
 *
 * @module
 */
import type { Lease, PersistenceAdapter, SessionEvent } from 'yoke'
import { postgresPersistence } from 'yoke/postgres'
import { type Measurement, report } from './measure.js'
import { logOf } from './persistence.bench.js'

const commits = 100
const perCommit = 10
const writers = 8

/** Appends `commits` turns to a new session; the ms they took. */
async function appendTurns(adapter: PersistenceAdapter, id: string, events: readonly SessionEvent[]): Promise<number> {
  await adapter.create({ version: 1, id, createdAt: 1_000 })
  const lease: Lease = await adapter.acquire(id)
  try {
    await adapter.append(id, events.slice(0, 2), { expectedSeq: 0, lease })
    const started = performance.now()
    for (let seq = 2; seq < 2 + commits * perCommit; seq += perCommit) {
      await adapter.append(id, events.slice(seq, seq + perCommit), { expectedSeq: seq, lease })
    }
    return performance.now() - started
  } finally {
    await lease.release()
  }
}

/**
 * Prints the notify cases and returns their ratios.
 *
 * @param connectionString - the server
 * @param schema - the bench's schema
 * @returns the ratios by case name
 */
export async function runNotifyCases(connectionString: string, schema: string): Promise<Record<string, number>> {
  const events = logOf(2 + commits * perCommit)
  const on = postgresPersistence({ connectionString, schema, notify: true })
  const off = postgresPersistence({ connectionString, schema, notify: false })
  let sessions = 0
  const one = (adapter: PersistenceAdapter) => () => appendTurns(adapter, `notify-${sessions++}`, events)
  const many = (adapter: PersistenceAdapter) => async () => {
    const started = performance.now()
    await Promise.all(Array.from({ length: writers }, () => appendTurns(adapter, `notify-${sessions++}`, events)))
    return performance.now() - started
  }
  try {
    const cases = [
      { name: 'notify: false, 100 commits of 10', events: commits * perCommit, run: one(off) },
      { name: 'append, 100 commits of 10, notify: true', events: commits * perCommit, run: one(on) },
      { name: `notify: false, ${writers} writers at once`, events: writers * commits * perCommit, run: many(off) },
      { name: `the same, ${writers} writers, notify: true`, events: writers * commits * perCommit, run: many(on) },
    ]
    for (const entry of cases) await entry.run()
    const best = cases.map(() => Number.POSITIVE_INFINITY)
    for (let round = 0; round < 5; round++) {
      for (const [index, entry] of cases.entries()) best[index] = Math.min(best[index]!, await entry.run())
    }
    const [offOne, onOne, offMany, onMany] = cases.map(
      (entry, index): Measurement => ({ name: entry.name, opsPerSecond: (entry.events * 1_000) / best[index]! }),
    ) as [Measurement, Measurement, Measurement, Measurement]
    console.log('  (events/s, one turn per commit; the floor is the same appends without notifications)')
    return {
      'append-notify': report(onOne, offOne).ratio,
      'append-notify-8-writers': report(onMany, offMany).ratio,
    }
  } finally {
    await on.close()
    await off.close()
  }
}
