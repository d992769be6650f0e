/**
 * The figures the SQLite and PostgreSQL benches share: one SQL adapter against its raw driver doing
 * the same work in the same run. `sqlite.bench.ts` and `postgres.bench.ts` supply the database;
 * this file runs the cases and prints them with {@link report}.
 *
 * What the floor writes: exactly the rows the adapter stores for the same events, i.e. each batch
 * through `packRecords` (a run of three or more chunks is one row, as the SQL store packs it) and
 * `JSON.stringify` of each record as the body, with `seq` and `last_seq` as the store sets them.
 * The rows are built before the clock starts, so the floor is the driver's insert alone. The
 * bench's turns hold two chunks each, so no run is packed and rows are events, one for one; using
 * the same packing anyway keeps the floor honest if the workload ever changes. The floor writes
 * them into a table of its own with the same columns and primary key as `yoke_events`, in the
 * same database, with the statements the store sends (`INSERT … VALUES` of up to 200 rows), one
 * transaction per batch; it does not touch `yoke_sessions` or `yoke_leases`. The difference is
 * the adapter's bookkeeping: the fenced lease check, the next-seq read, the sessions row and its
 * revision, plus the executor's promise plumbing.
 *
 * How to read: each case prints its rate (events per second) next to its floor's and the ratio,
 * how many times slower the adapter is than the raw driver (goal ≤ 1.5×). Every case keeps its
 * best round, so a busy machine shows up as spread between runs, not inside one. The
 * one-turn-per-commit case is bound by the disk's flush (SQLite `synchronous=FULL`, PostgreSQL
 * `fsync`): on a disk shared with other work its best round is a lucky spell that the shorter
 * floor is likelier to catch, so read it over several runs. Where the end-to-end append is far
 * above the adapter's own, compare it with the null-adapter line: that is the harness's share.
 */
import { createHarness, type Lease, type PersistenceAdapter, type SessionEvent } from 'yoke'
import { type ChunkRunRow, packRecords } from '../src/persistence/pack-chunks.js'
import { type Measurement, report } from './measure.js'
import { appendAndFlush, logOf, nullAdapter } from './persistence.bench.js'

/**
 * Rows per `INSERT … VALUES` statement of the floors: the SQL store's own batching, so both sides
 * send the same statements (200 rows is 800 parameters, below every driver's limit).
 */
export const ROWS_PER_INSERT = 200

/** One stored row, as the SQL store writes it into `yoke_events`. */
export interface RawRow {
  readonly seq: number
  readonly lastSeq: number
  /** The JSON text of the event or of the packed chunk run. */
  readonly body: string
}

/** The raw driver's side of every figure, over the same database as the adapter. */
export interface RawSqlDriver {
  /** The driver's name in case names (`better-sqlite3`, `pg`). */
  readonly driver: string
  /** How the floor inserts one batch's rows, short (`INSERT per row`, `INSERT … VALUES ×1000`). */
  readonly inserts: string
  /**
   * Inserts `batches` for `session` into the floor's table, one transaction per batch, with the
   * same sync settings as the adapter.
   */
  insertBatches(session: string, batches: readonly (readonly RawRow[])[]): Promise<void>
  /**
   * `SELECT seq, last_seq, body … WHERE session = ? AND last_seq >= ? ORDER BY seq` on the floor's
   * table and `JSON.parse` of every body, the parsed values kept until it resolves.
   *
   * @returns how many rows were parsed
   */
  selectFrom(session: string, fromSeq: number): Promise<number>
  /** Closes the driver's connection. */
  close(): Promise<void>
}

/** One database for {@link runSqlBench}. */
export interface SqlBenchTarget {
  /** The database's name in case names (`SQLite`, `PostgreSQL`). */
  readonly label: string
  /** A new adapter instance over the bench's database. */
  adapter(): PersistenceAdapter
  /** The raw driver over the same database. */
  readonly raw: RawSqlDriver
}

/** The rows the SQL store writes for one batch (runs packed, bodies as JSON text). */
export function rowsOf(batch: readonly SessionEvent[]): RawRow[] {
  return packRecords(batch).map((record) => {
    if (record.type === 'chunk-run') {
      const run = record as ChunkRunRow
      return { seq: run.seq0, lastSeq: run.seq0 + run.values.length - 1, body: JSON.stringify(run) }
    }
    const event = record as SessionEvent
    return { seq: event.seq, lastSeq: event.seq, body: JSON.stringify(event) }
  })
}

/** Wraps `inner` to keep every non-empty batch its `append` received, by session id. */
function recordingBatches(inner: PersistenceAdapter): {
  readonly adapter: PersistenceAdapter
  readonly batches: Map<string, (readonly SessionEvent[])[]>
} {
  const batches = new Map<string, (readonly SessionEvent[])[]>()
  // A proxy keeps the adapter's optional methods (readFrom, inspectLease, …) as they are.
  const adapter = new Proxy(inner, {
    get(target, key) {
      if (key === 'append') {
        const append: PersistenceAdapter['append'] = async (sessionId, events, options) => {
          await target.append(sessionId, events, options)
          if (events.length === 0) return
          const list = batches.get(sessionId) ?? []
          list.push(events)
          batches.set(sessionId, list)
        }
        return append
      }
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { adapter, batches }
}

/**
 * Appends `batches` to a new session `id` through `adapter` under one lease, with each event's
 * JSON text as the harness's write-behind passes it; the ms the appends took.
 */
async function appendBatches(
  adapter: PersistenceAdapter,
  id: string,
  prefix: readonly SessionEvent[],
  batches: readonly (readonly SessionEvent[])[],
): Promise<number> {
  await adapter.create({ version: 1, id, createdAt: 1_000 })
  const lease: Lease = await adapter.acquire(id)
  try {
    // The first append writes the sessions row; it is setup, as in the harness case.
    if (prefix.length > 0) await adapter.append(id, prefix, { expectedSeq: 0, lease })
    const texts = batches.map((batch) => batch.map((event) => JSON.stringify(event)))
    const started = performance.now()
    let seq = prefix.length
    for (const [index, batch] of batches.entries()) {
      await adapter.append(id, batch, { expectedSeq: seq, lease, texts: texts[index] as string[] })
      seq += batch.length
    }
    return performance.now() - started
  } finally {
    await lease.release()
  }
}

/** Cuts `events` into consecutive batches of `size`. */
function batchesOf(events: readonly SessionEvent[], size: number): (readonly SessionEvent[])[] {
  const batches: (readonly SessionEvent[])[] = []
  for (let at = 0; at < events.length; at += size) batches.push(events.slice(at, at + size))
  return batches
}

/**
 * Runs the append and load figures for one database and returns the ratios by case name.
 *
 * @param target - the database, its adapter and its raw driver
 */
export async function runSqlBench(target: SqlBenchTarget): Promise<Record<string, number>> {
  const ratios: Record<string, number> = {}
  const { raw, label } = target
  const count = 10_000
  let sessions = 0
  const freshId = (kind: string): string => `${kind}-${sessions++}`

  // ---- Append: throughput at the default write-behind ------------------------------------
  // One harness session first, to learn the batches the write-behind makes of 10,000 events.
  const { adapter: recording, batches } = recordingBatches(target.adapter())
  const live = await createHarness({ persistence: recording })
  const firstId = freshId('h')
  await appendAndFlush(live, firstId, count)
  // Without the batch of the two setup events.
  const measured = (batches.get(firstId) ?? []).slice(1)
  const sizes = measured.map((batch) => batch.length)
  const written = measured.reduce((total, batch) => total + batch.length, 0)
  if (written !== count) throw new Error(`the write-behind wrote ${written} events, not ${count}`)
  const measuredRows = measured.map(rowsOf)
  const bytes = measuredRows.flat().reduce((total, row) => total + Buffer.byteLength(row.body), 0)
  // The adapter's append alone on batches of the same sizes (no session checks, no write-behind).
  const direct = target.adapter()
  const sample = logOf(count + 2)
  const sameBatches: (readonly SessionEvent[])[] = []
  let at = 2
  for (const size of sizes) {
    sameBatches.push(sample.slice(at, at + size))
    at += size
  }
  // The harness over an adapter that stores nothing: its own share (session.append's checks of
  // every event, the coordinator, the write-behind), to read the end-to-end figure against. (A
  // subtraction of the two is too noisy on a busy machine to print.)
  const none = await createHarness({ persistence: nullAdapter() })
  const [appendFloor, harnessAppend, nullAppend, adapterAppend] = await interleavedPerEvent(count, [
    {
      name: `${raw.driver} ${raw.inserts}, COMMIT per batch`,
      run: () => raw.insertBatches(freshId('r'), measuredRows),
    },
    {
      name: `append ${count.toLocaleString('en-US')} events + flush`,
      run: () => appendAndFlush(live, freshId('h'), count),
    },
    { name: 'the same, null adapter', run: () => appendAndFlush(none, freshId('n'), count) },
    {
      name: 'adapter.append of the same batches',
      run: () => appendBatches(direct, freshId('d'), sample.slice(0, 2), sameBatches),
    },
  ])
  await live.close()
  await none.close()
  const rows = measuredRows.flat().length
  console.log(
    `  (events/s; write-behind batches ${JSON.stringify(sizes)}: ${rows} rows, ${(bytes / 1_048_576).toFixed(1)} MB)`,
  )
  ratios['append+flush'] = report(harnessAppend as Measurement, appendFloor as Measurement).ratio
  ratios['append+flush(null adapter)'] = report(nullAppend as Measurement, appendFloor as Measurement).ratio
  ratios['adapter-append'] = report(adapterAppend as Measurement, appendFloor as Measurement).ratio

  // Small batches, one turn (10 events) each: a commit per turn, where the per-transaction
  // bookkeeping weighs most against the rows themselves.
  const turns = batchesOf(sample.slice(2, 2 + 1_000), 10)
  const turnRows = turns.map(rowsOf)
  const [turnFloor, turnAdapter] = await interleavedPerEvent(1_000, [
    { name: `${raw.driver} ${raw.inserts}, 100 COMMITs of 10`, run: () => raw.insertBatches(freshId('rt'), turnRows) },
    {
      name: 'adapter.append, 100 batches of 10',
      run: () => appendBatches(direct, freshId('dt'), sample.slice(0, 2), turns),
    },
  ])
  console.log('  (events/s, one turn per commit)')
  ratios['adapter-append-per-turn'] = report(turnAdapter as Measurement, turnFloor as Measurement).ratio
  await direct.close()

  // ---- Load: a 100,000-event session ---------------------------------------------------------
  const events = logOf(100_000)
  const storeBatches = batchesOf(events, 100)
  const writer = target.adapter()
  await appendBatches(writer, 'load', [], storeBatches)
  await writer.close()
  await raw.insertBatches('load', storeBatches.map(rowsOf))
  const tailFrom = events.length - count
  const reader = target.adapter()
  const harness = await createHarness({ persistence: target.adapter() })
  const loads = await interleavedPerEvent(events.length, [
    {
      name: `${raw.driver} SELECT … ORDER BY seq + parse`,
      run: async () => {
        const parsed = await raw.selectFrom('load', 0)
        if (parsed !== events.length) throw new Error(`parsed ${parsed} rows`)
      },
    },
    {
      name: 'adapter.load, 100,000 events',
      run: async () => {
        if ((await reader.load('load')).events.length !== events.length) throw new Error('short load')
      },
    },
    {
      name: 'persistence.load (lease, read checks)',
      run: async () => {
        if ((await harness.persistence.load('load')).events.length !== events.length) throw new Error('short load')
      },
    },
  ])
  const [loadFloor, adapterLoad, coordinatorLoad] = loads as [Measurement, Measurement, Measurement]
  console.log('  (events/s)')
  ratios['adapter-load'] = report(adapterLoad, loadFloor).ratio
  ratios['coordinator-load'] = report(coordinatorLoad, loadFloor).ratio
  await harness.close()

  const readFrom = reader.readFrom?.bind(reader)
  if (readFrom === undefined) console.log(`  (${label} adapter has no readFrom: the tail read is skipped)`)
  else {
    const [tailFloor, tailRead] = (await interleavedPerEvent(count, [
      {
        name: `${raw.driver} SELECT last_seq >= ${tailFrom} + parse`,
        run: async () => {
          const parsed = await raw.selectFrom('load', tailFrom)
          if (parsed !== count) throw new Error(`parsed ${parsed} rows`)
        },
      },
      {
        name: `adapter.readFrom, the last ${count.toLocaleString('en-US')}`,
        run: async () => {
          if ((await readFrom('load', tailFrom)).events.length !== count) throw new Error('short read')
        },
      },
    ])) as [Measurement, Measurement]
    console.log(`  (events/s, the last ${count.toLocaleString('en-US')} events of the 100,000)`)
    ratios['adapter-readFrom-tail'] = report(tailRead, tailFloor).ratio
  }
  await reader.close()
  return ratios
}

/** One case of {@link interleavedPerEvent}: a run that may report its own elapsed ms (setup left out). */
interface TimedCase {
  readonly name: string
  readonly run: () => Promise<number | undefined | void>
}

/**
 * 5 rounds (after one warm-up) in which every case runs once, in order, so a slow spell of the
 * machine hits them all; each case keeps its best round, as events per second of `events`.
 */
async function interleavedPerEvent(events: number, cases: readonly TimedCase[]): Promise<Measurement[]> {
  for (const entry of cases) await entry.run()
  const best = cases.map(() => Number.POSITIVE_INFINITY)
  for (let round = 0; round < 5; round++) {
    for (const [index, entry] of cases.entries()) {
      const started = performance.now()
      const reported = await entry.run()
      const elapsed = typeof reported === 'number' ? reported : performance.now() - started
      best[index] = Math.min(best[index] as number, elapsed)
    }
  }
  return cases.map((entry, index) => ({ name: entry.name, opsPerSecond: (events * 1_000) / (best[index] as number) }))
}
