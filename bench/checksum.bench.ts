/**
 * The cost of log checksums, each against the same work without them, in one run:
 *
 * - Plain JSONL `checksum: 'batch'`: `load` of a 100,000-event log and appends of 100-event
 *   batches (each one write and one `fdatasync`), vs the same with `checksum: 'none'`.
 * - zstd content checksums: XXH64 of a frame's decoded text, which every zstd load now computes,
 *   vs fzstd decoding the same frame.
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as wasmZstd from '@foxglove/wasm-zstd'
import { decompress } from 'fzstd'
import { createSession, jsonlPersistence, type SessionEvent } from 'yoke'
import { fakeClock } from 'yoke/testing'
import { xxhash64 } from '../src/persistence/jsonl/xxhash64.js'
import { type Measurement, report } from './measure.js'

const EVENTS = 100_000
const APPENDS = 200
const BATCH = 100

/** `count` committed events: turns of a user message, two chunks and an answer. */
function logOf(count: number): readonly SessionEvent[] {
  const session = createSession({ id: 'bench', clock: fakeClock({ now: 1_000 }) })
  let turn = 1
  while (session.length < count) {
    session.append('turn/start', { turn })
    session.append(
      'user/message',
      {
        id: `u-${turn}`,
        role: 'user',
        content: [{ type: 'text', text: `What is the weather in Paris, day ${turn}? ${'Tell me more. '.repeat(8)}` }],
        source: { kind: 'user' },
      } as never,
      { surfaceOp: 'append' },
    )
    session.append('turn/end', { turn, reason: { kind: 'completed' } } as never)
    turn++
  }
  return session.events.slice(0, count)
}

/**
 * Two cases measured in alternation (after one warm-up each), so a busy machine slows both alike;
 * each keeps its best round, as operations per second.
 */
async function pairOf(
  rounds: number,
  floor: { readonly name: string; readonly run: () => Promise<number> },
  subject: { readonly name: string; readonly run: () => Promise<number> },
): Promise<{ readonly floor: Measurement; readonly subject: Measurement }> {
  await floor.run()
  await subject.run()
  let bestFloor = Number.POSITIVE_INFINITY
  let bestSubject = Number.POSITIVE_INFINITY
  for (let round = 0; round < rounds; round++) {
    bestFloor = Math.min(bestFloor, await floor.run())
    bestSubject = Math.min(bestSubject, await subject.run())
  }
  return {
    floor: { name: floor.name, opsPerSecond: 1_000 / bestFloor },
    subject: { name: subject.name, opsPerSecond: 1_000 / bestSubject },
  }
}

async function timed(operation: () => unknown): Promise<number> {
  const started = performance.now()
  await operation()
  return performance.now() - started
}

/** Runs the checksum benchmarks and prints each ratio. */
export async function runChecksumBench(): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-bench-checksum-'))
  const ratios: Record<string, number> = {}
  try {
    const events = logOf(EVENTS)
    for (const checksum of ['none', 'batch'] as const) {
      const adapter = jsonlPersistence({ dir: join(dir, checksum), checksum, lock: false })
      await adapter.create({ version: 1, id: 'big', createdAt: 1_000 })
      const lease = await adapter.acquire('big')
      for (let at = 0; at < events.length; at += 1_000)
        await adapter.append('big', events.slice(at, at + 1_000), { expectedSeq: at, lease })
      await lease.release()
      await adapter.close()
    }
    const load = async (checksum: 'none' | 'batch'): Promise<number> => {
      const adapter = jsonlPersistence({ dir: join(dir, checksum), lock: false })
      const elapsed = await timed(() => adapter.load('big'))
      await adapter.close()
      return elapsed
    }
    const loads = await pairOf(
      7,
      { name: `load ${EVENTS} events, checksum 'none'`, run: () => load('none') },
      { name: `load ${EVENTS} events, checksum 'batch'`, run: () => load('batch') },
    )
    ratios['loadBatchChecksum'] = report(loads.subject, loads.floor).ratio

    const small = logOf(APPENDS * BATCH)
    let round = 0
    const append = async (checksum: 'none' | 'batch'): Promise<number> => {
      const adapter = jsonlPersistence({ dir: join(dir, `append-${checksum}`), checksum, lock: false })
      const id = `s${round++}`
      await adapter.create({ version: 1, id, createdAt: 1_000 })
      const lease = await adapter.acquire(id)
      const elapsed = await timed(async () => {
        for (let at = 0; at < small.length; at += BATCH)
          await adapter.append(id, small.slice(at, at + BATCH), { expectedSeq: at, lease })
      })
      await lease.release()
      await adapter.close()
      return elapsed
    }
    const appends = await pairOf(
      5,
      { name: `${APPENDS} appends of ${BATCH} events, checksum 'none'`, run: () => append('none') },
      { name: `${APPENDS} appends of ${BATCH} events, checksum 'batch'`, run: () => append('batch') },
    )
    ratios['appendBatchChecksum'] = report(appends.subject, appends.floor).ratio

    await wasmZstd.isLoaded
    const text = readFileSync(join(dir, 'none', 'big.jsonl')).subarray(0, 4_000_000)
    const frame = new Uint8Array(wasmZstd.compress(text, 3))
    const decodes = await pairOf(
      9,
      { name: 'fzstd decode of a 4 MB frame', run: () => timed(() => decompress(frame)) },
      { name: 'fzstd decode + XXH64 of a 4 MB frame', run: () => timed(() => xxhash64(decompress(frame))) },
    )
    ratios['zstdContentChecksum'] = report(decodes.subject, decodes.floor).ratio
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return ratios
}
