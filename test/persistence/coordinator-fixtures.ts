/**
 * Shared fixtures of the coordinator tests: the `s1` header, line builders, logs of one
 * completed turn and "stored X" (create, acquire, append each batch, release).
 */
import type { PersistenceAdapter, SessionEvent, SessionHeader } from 'yoke'
import type { FaultyPersistence } from 'yoke/testing'
import type { PersistenceCall } from '../../src/testing/faulty-persistence.js'
import { type EventPlan, L1, logOf } from '../session/builders.js'

/** The header of `s1`. */
export const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }
/** The `s1` header as its JSONL header line. */
export const headerLine = '{"type":"session","version":1,"id":"s1","createdAt":1000,"cwd":"/w"}'

/** `JSON.stringify`. */
export const json = (value: unknown): string => JSON.stringify(value)
/** One JSONL record line. */
export const lineOf = (event: unknown): string => `${JSON.stringify(event)}\n`
/** The seqs of `events`. */
export const seqsOf = (events: readonly SessionEvent[]): number[] => events.map((event) => event.seq)
/** The types of `events`. */
export const typesOf = (events: readonly SessionEvent[]): string[] => events.map((event) => event.type)

/** One completed turn followed by `extra`, seqs from 0. */
export function log(extra: readonly EventPlan[] = []): SessionEvent[] {
  return logOf([...L1(), ...extra])
}

/** "Stored X": create, acquire, append each batch, release. */
export async function store(
  adapter: PersistenceAdapter,
  batches: readonly (readonly SessionEvent[])[],
  header: SessionHeader = H1,
): Promise<void> {
  await adapter.create(header)
  const lease = await adapter.acquire(header.id)
  let seq = 0
  for (const batch of batches) {
    await adapter.append(header.id, batch, { expectedSeq: seq, lease })
    seq += batch.length
  }
  await lease.release()
}

/** The calls of `method` the wrapper saw. */
export const callsOf = (adapter: FaultyPersistence, method: PersistenceCall['method']): PersistenceCall[] =>
  adapter.calls.filter((entry) => entry.method === method)

/** Lets pending promise continuations and I/O callbacks run. */
export async function settle(rounds = 20): Promise<void> {
  for (let round = 0; round < rounds; round++) await new Promise((resolve) => setImmediate(resolve))
}
