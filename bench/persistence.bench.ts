/**
 * Persistence benchmarks, each against a floor measured in the same run:
 *
 * - Load: `load` of a 100,000-event plain JSONL log, through the adapter and through the
 *   coordinator (lease, the cold-read checks, closers), vs `readFile` + `split('\n')` + `JSON.parse`
 *   of every line (target ≤ 2×); the same log stored gzip and zstd, loaded by the adapter, vs the
 *   same plain floor.
 * - Append: append throughput at the default write-behind: 10,000 events appended to a live session
 *   and flushed, vs the raw floor of one `writeSync` of the same batch bytes + `fdatasync` per
 *   batch, at the batch sizes the write-behind produced (target ≤ 1.5×). Reported twice: end to
 *   end (including `session.append`'s validation of every event) and the adapter's `append` alone
 *   on the same batches.
 */
import { closeSync, fdatasyncSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as wasmZstd from '@foxglove/wasm-zstd'
import {
  createHarness,
  createSession,
  jsonlPersistence,
  type Lease,
  type PersistenceAdapter,
  type Session,
  type SessionEvent,
} from 'yoke'
import type { JsonlPersistence } from '../src/persistence/index.js'
import { fakeClock } from 'yoke/testing'
import { type Measurement, report } from './measure.js'

interface Planned {
  readonly type: string
  readonly data: unknown
  readonly options?: { readonly surfaceOp?: 'append'; readonly sourceEventSeqs?: readonly number[] }
}

/** One turn of one tool step, 10 events, as the agent loop writes them (about 3.5 KB of JSONL). */
function turnEvents(turn: number, base: number): Planned[] {
  const callId = `call-${turn}`
  const answer = `Sunny, 21°C in Paris on day ${turn}. ${'Light wind from the west, no rain expected. '.repeat(6)}`
  return [
    { type: 'turn/start', data: { turn } },
    { type: 'step/start', data: { turn, step: 1 } },
    {
      type: 'user/message',
      data: {
        id: `u-${turn}`,
        role: 'user',
        content: [{ type: 'text', text: `What is the weather in Paris, day ${turn}?` }],
        source: { kind: 'user' },
      },
      options: { surfaceOp: 'append' },
    },
    { type: 'assistant/chunk', data: { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Let me look ' } } },
    { type: 'assistant/chunk', data: { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'that up.' } } },
    {
      type: 'assistant/message',
      data: {
        turn,
        step: 1,
        message: {
          id: `a-${turn}`,
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look that up.' },
            { type: 'tool-call', id: callId, name: 'search', arguments: `{"query":"weather in Paris, day ${turn}"}` },
          ],
          source: { kind: 'model', provider: 'mock', model: 'mock' },
        },
        usage: { inputTokens: 120 + turn, outputTokens: 24 },
      },
      options: { surfaceOp: 'append', sourceEventSeqs: [base + 3, base + 4] },
    },
    {
      type: 'tool/call',
      data: { turn, step: 1, callId, name: 'search', arguments: `{"query":"weather in Paris, day ${turn}"}` },
    },
    {
      type: 'tool/result',
      data: {
        turn,
        step: 1,
        message: {
          id: `r-${turn}`,
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: answer }] }],
          source: { kind: 'tool', callId },
        },
      },
      options: { surfaceOp: 'append', sourceEventSeqs: [base + 6] },
    },
    { type: 'step/end', data: { turn, step: 1 } },
    { type: 'turn/end', data: { turn, reason: { kind: 'completed' } } },
  ]
}

/** Appends whole turns of {@link turnEvents} to `session` until it holds at least `events` events. */
export function appendTurns(session: Session, events: number): void {
  let turn = session.turnState().nextTurn
  while (session.length < events) {
    for (const event of turnEvents(turn, session.length)) session.append(event.type, event.data as never, event.options)
    turn++
  }
}

/** `count` committed events, built (and validated) by a plain session. */
export function logOf(count: number): readonly SessionEvent[] {
  const session = createSession({ id: 'bench', clock: fakeClock({ now: 1_000 }) })
  appendTurns(session, count)
  return session.events
}

/**
 * Best of `rounds` single calls (after one warm-up), as operations per second. An operation
 * that returns a number reports its own elapsed milliseconds (to leave setup untimed).
 */
export async function bestOf(name: string, rounds: number, operation: () => unknown): Promise<Measurement> {
  await operation()
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    const reported = await operation()
    best = Math.min(best, typeof reported === 'number' ? reported : performance.now() - started)
  }
  return { name, opsPerSecond: 1_000 / best }
}

/**
 * `rounds` rounds (after one warm-up) in which every case runs once, in order; each case keeps its
 * best round, as operations per second.
 */
export async function interleavedBest(
  rounds: number,
  cases: readonly { readonly name: string; readonly run: () => Promise<void> }[],
): Promise<Measurement[]> {
  for (const entry of cases) await entry.run()
  const best = cases.map(() => Number.POSITIVE_INFINITY)
  for (let round = 0; round < rounds; round++) {
    for (const [index, entry] of cases.entries()) {
      const started = performance.now()
      await entry.run()
      best[index] = Math.min(best[index] as number, performance.now() - started)
    }
  }
  return cases.map((entry, index) => ({ name: entry.name, opsPerSecond: 1_000 / (best[index] as number) }))
}

/** Stores `events` as "stored X" does (create, acquire, append in batches, release). */
async function store(
  adapter: PersistenceAdapter,
  id: string,
  events: readonly SessionEvent[],
  batch: number,
): Promise<void> {
  await adapter.create({ version: 1, id, createdAt: 1_000 })
  const lease = await adapter.acquire(id)
  for (let at = 0; at < events.length; at += batch)
    await adapter.append(id, events.slice(at, at + batch), { expectedSeq: at, lease })
  await lease.release()
}

function zstdEncoder(bytes: Uint8Array, level: number): Uint8Array {
  return new Uint8Array(wasmZstd.compress(bytes, level))
}

/** An adapter that records each append's batch size and the log's size once it resolved. */
interface RecordedBatch {
  readonly sessionId: string
  readonly count: number
  /** The log's size before the append (0 for the materializing one) and after it. */
  readonly start: number
  readonly end: number
}

function recordingSizes(inner: JsonlPersistence): { adapter: PersistenceAdapter; batches: RecordedBatch[] } {
  const batches: RecordedBatch[] = []
  const sizeOf = (sessionId: string): number =>
    statSync(join(inner.dir, `${sessionId}.jsonl`), { throwIfNoEntry: false })?.size ?? 0
  const adapter: PersistenceAdapter = {
    name: inner.name,
    create: (header) => inner.create(header),
    append: async (sessionId, events, options) => {
      const start = sizeOf(sessionId)
      await inner.append(sessionId, events, options)
      if (events.length > 0) batches.push({ sessionId, count: events.length, start, end: sizeOf(sessionId) })
    },
    load: (sessionId, options) => inner.load(sessionId, options),
    commitRepair: (sessionId, torn, closers) => inner.commitRepair(sessionId, torn, closers),
    readFrom: (sessionId, fromSeq, options) => inner.readFrom(sessionId, fromSeq, options),
    list: (options) => inner.list(options),
    delete: (sessionId) => inner.delete(sessionId),
    acquire: (sessionId) => inner.acquire(sessionId),
    close: () => inner.close(),
  }
  return { adapter, batches }
}

/** An adapter that stores nothing: what the harness costs without any persistence work. */
export function nullAdapter(): PersistenceAdapter {
  const missing = (): never => {
    throw new Error('the null adapter stores nothing')
  }
  return {
    name: 'null',
    create: async () => {},
    append: async () => {},
    load: async () => missing(),
    commitRepair: async () => {},
    list: async () => ({ headers: [], damaged: [] }),
    acquire: async (sessionId) => ({
      sessionId,
      token: 'null',
      owner: 'null',
      epoch: 1,
      signal: new AbortController().signal,
      release: async () => {},
    }),
    close: async () => {},
  }
}

/** 10,000 events appended to a live, materialized session of `harness` and flushed; the elapsed ms. */
export async function appendAndFlush(
  harness: Awaited<ReturnType<typeof createHarness>>,
  id: string,
  count: number,
): Promise<number> {
  const session = harness.sessions.create({ id })
  session.append('turn/start', { turn: 1 }, {})
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } }, {})
  await harness.sessions.flush(session)
  const started = performance.now()
  appendTurns(session, count + 2)
  await harness.sessions.flush(session)
  const elapsed = performance.now() - started
  await harness.sessions.dispose(session)
  return elapsed
}

/** Runs every persistence case and returns the ratios by case name. */
export async function runPersistenceBench(): Promise<Record<string, number>> {
  await wasmZstd.isLoaded
  const ratios: Record<string, number> = {}
  const dir = await mkdtemp(join(tmpdir(), 'yoke-bench-persistence-'))
  try {
    // ---- Load: a 100,000-event log ------------------------------------------------------
    const events = logOf(100_000)
    // Write-behind batches of 100 events: 1,000 lines groups, and 1,000 frames when compressed.
    const writer = jsonlPersistence({ dir })
    await store(writer, 'p1', events, 100)
    await writer.close()
    for (const compression of ['gzip', 'zstd'] as const) {
      const compressed = jsonlPersistence({ dir: join(dir, compression), compression, zstdEncoder })
      await store(compressed, 'p1', events, 100)
      await compressed.close()
    }
    const path = join(dir, 'p1.jsonl')
    const megabytes = statSync(path).size / 1_048_576
    // The floor and the two plain loads run interleaved, round by round, so a slow spell of the
    // machine hits all three; each keeps its best round.
    const reader = jsonlPersistence({ dir })
    const harness = await createHarness({ persistence: reader })
    const [floor, adapterLoad, coordinatorLoad] = await interleavedBest(5, [
      {
        name: `readFile + split + JSON.parse (${megabytes.toFixed(1)} MB)`,
        run: async () => {
          const lines = (await readFile(path, 'utf8')).split('\n')
          let parsed = 0
          for (const line of lines) if (line.length > 0 && JSON.parse(line) !== undefined) parsed++
          if (parsed !== events.length + 1) throw new Error(`parsed ${parsed} lines`)
        },
      },
      {
        name: 'adapter.load, 100,000-event plain log',
        run: async () => {
          if ((await reader.load('p1')).events.length !== events.length) throw new Error('short load')
        },
      },
      {
        name: 'persistence.load (lease, read checks)',
        run: async () => {
          if ((await harness.persistence.load('p1')).events.length !== events.length) throw new Error('short load')
        },
      },
    ])
    await harness.close()
    // Reported per event (loads/s × 100,000), so the figures stay readable.
    const perLoad = (measurement: Measurement): Measurement => ({
      name: measurement.name,
      opsPerSecond: measurement.opsPerSecond * events.length,
    })
    const floorEvents = perLoad(floor as Measurement)
    console.log('  (events/s)')
    ratios['p1-adapter-load'] = report(perLoad(adapterLoad as Measurement), floorEvents).ratio
    ratios['p1-coordinator-load'] = report(perLoad(coordinatorLoad as Measurement), floorEvents).ratio
    for (const compression of ['gzip', 'zstd'] as const) {
      const compressed = jsonlPersistence({ dir: join(dir, compression) })
      const size =
        statSync(join(dir, compression, `p1.jsonl.${compression === 'gzip' ? 'gz' : 'zst'}`)).size / 1_048_576
      const load = await bestOf(`adapter.load, ${compression} (${size.toFixed(1)} MB)`, 5, async () => {
        if ((await compressed.load('p1')).events.length !== events.length) throw new Error('short load')
      })
      ratios[`p1-${compression}-load`] = report(perLoad(load), floorEvents).ratio
      await compressed.close()
    }

    // ---- Append: throughput at the default write-behind ----------------------------------
    const p2dir = join(dir, 'p2')
    const { adapter, batches } = recordingSizes(jsonlPersistence({ dir: p2dir }))
    const live = await createHarness({ persistence: adapter })
    const count = 10_000
    let sessions = 0
    let lastId = ''
    const harnessAppend = await bestOf(`append ${count.toLocaleString('en-US')} events + flush`, 5, () => {
      lastId = `p2-${sessions++}`
      return appendAndFlush(live, lastId, count)
    })
    await live.close()
    // The batches of the last measured session, without the materializing one of the two setup events.
    const measured = batches.filter((batch) => batch.sessionId === lastId && batch.start > 0)
    const sizes = measured.map((batch) => batch.count)
    const bytes = readFileSync(join(p2dir, `${lastId}.jsonl`))
    const slices = measured.map((batch) => bytes.subarray(batch.start, batch.end))
    const rawPath = join(dir, 'raw.jsonl')
    const rawFloor = await bestOf(`writeSync + fdatasync per batch (${sizes.join(', ')} events)`, 5, () => {
      const fd = openSync(rawPath, 'w')
      try {
        for (const slice of slices) {
          writeSync(fd, slice)
          fdatasyncSync(fd)
        }
      } finally {
        closeSync(fd)
      }
    })
    const perEvent = (measurement: Measurement): Measurement => ({
      name: measurement.name,
      opsPerSecond: measurement.opsPerSecond * count,
    })
    const harnessRate = perEvent(harnessAppend)
    const floorRate = perEvent(rawFloor)
    const batchBytes = slices.reduce((total, slice) => total + slice.length, 0)
    console.log(
      `  (events/s below; write-behind batches ${JSON.stringify(sizes)}, ${(batchBytes / 1_048_576).toFixed(1)} MB)`,
    )
    ratios['p2-append+flush'] = report(harnessRate, floorRate).ratio

    // The same with an adapter that stores nothing: the harness's own share (session.append's checks
    // of every event, the coordinator, write-behind), and what the JSONL write path adds to it.
    const none = await createHarness({ persistence: nullAdapter() })
    let nulls = 0
    const nullAppend = await bestOf(`append ${count.toLocaleString('en-US')} events + flush, null adapter`, 5, () =>
      appendAndFlush(none, `n-${nulls++}`, count),
    )
    await none.close()
    ratios['p2-append+flush(null adapter)'] = report(perEvent(nullAppend), floorRate).ratio
    const jsonlShare: Measurement = {
      name: 'JSONL share (the two above, subtracted)',
      opsPerSecond: count / (1 / harnessAppend.opsPerSecond - 1 / nullAppend.opsPerSecond),
    }
    ratios['p2-jsonl-share'] = report(jsonlShare, floorRate).ratio

    // The adapter's write path alone (encode, fstat, lock check, write, fdatasync) on the same batches.
    const batchEvents: SessionEvent[][] = []
    const sample = logOf(count + 2)
    let at = 2
    for (const size of sizes) {
      batchEvents.push(sample.slice(at, at + size))
      at += size
    }
    const direct = jsonlPersistence({ dir: join(dir, 'p2-direct') })
    let directs = 0
    let lease: Lease | undefined
    const adapterAppend = await bestOf('adapter.append of the same batches', 5, async () => {
      const id = `d-${directs++}`
      await direct.create({ version: 1, id, createdAt: 1_000 })
      lease = await direct.acquire(id)
      await direct.append(id, sample.slice(0, 2), { expectedSeq: 0, lease })
      const started = performance.now()
      let seq = 2
      for (const batch of batchEvents) {
        await direct.append(id, batch, { expectedSeq: seq, lease })
        seq += batch.length
      }
      const elapsed = performance.now() - started
      await lease.release()
      return elapsed
    })
    await direct.close()
    ratios['p2-adapter-append'] = report(perEvent(adapterAppend), floorRate).ratio
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return ratios
}
