/**
 * What every conformance case shares: the per-test context, the case shape and small assertion
 * helpers over `node:assert/strict` (no test runner).
 *
 * @module
 */
import assert from 'node:assert/strict'
import { Buffer } from 'node:buffer'
import { ErrorCode } from '../../errors/codes.js'
import { HarnessError, type HarnessErrorClass } from '../../errors/harness-error.js'
import { LeaseLostError } from '../../errors/lease-lost-error.js'
import type { Lease, PersistenceAdapter } from '../../persistence/persistence-adapter.js'
import { interruptedTurnClosers } from '../../session/interrupted-turn-closers.js'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import type { ConformanceTarget } from './conformance-target.js'

/** A hook (or optional adapter method) a case needs; without it the case is registered as skipped. */
export type ConformanceHook =
  | 'bytes'
  | 'damageRecord'
  | 'expireLease'
  | 'ageLease'
  | 'plantLease'
  | 'spawnWriter'
  | 'adapter.readFrom'
  | 'adapter.delete'

/** What a case runs against: one fresh target. */
export interface ConformanceContext {
  /** The target `makeTarget` returned for this test. */
  readonly target: ConformanceTarget
  /** `target.adapter`. */
  readonly adapter: PersistenceAdapter
  /** The size of the large batch. */
  readonly largeBatch: number
  /**
   * `target.reopen()`, remembered so the suite closes it after the test.
   *
   * @returns a second instance over the same storage
   */
  reopen(): Promise<PersistenceAdapter>
}

/** One conformance test. */
export interface ConformanceCase {
  /** The test name, a behavior sentence naming the rule. */
  readonly name: string
  /** The hooks it needs. */
  readonly needs: readonly ConformanceHook[]
  /** A longer timeout, for the slow cases. */
  readonly timeoutMs?: number
  /** The test body. */
  run(context: ConformanceContext): Promise<void>
}

/** The compact JSON text of each event: what the byte-exact comparisons compare. */
export function jsonOf(events: readonly unknown[]): string[] {
  return events.map((event) => JSON.stringify(event))
}

/** A short description of anything thrown, for assertion messages. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { readonly code?: unknown }).code
    return `${error.name}${typeof code === 'string' ? ` ${code}` : ''}: ${error.message}`
  }
  return String(error)
}

/**
 * What `action` rejects (or throws) with; fails the test when it succeeds.
 *
 * @param action - the call
 * @param what - names the call in the failure message
 * @returns the error
 */
export async function rejectionOf(action: () => Promise<unknown>, what: string): Promise<unknown> {
  try {
    await action()
  } catch (error) {
    return error
  }
  assert.fail(`${what}: expected a rejection, but it resolved`)
}

/**
 * Asserts that `error` is an `errorClass` with `code` and, for each entry of `fields`, that field
 * deep-equal to the value.
 *
 * @returns the error, typed
 */
export function expectError<T>(
  error: unknown,
  errorClass: HarnessErrorClass<T>,
  code: string,
  what: string,
  fields: Readonly<Record<string, unknown>> = {},
): T {
  assert.ok(
    HarnessError.is.call(errorClass, error),
    `${what}: expected ${errorClass.brand} ${code}, got ${describeError(error)}`,
  )
  const record = error as Record<string, unknown>
  assert.equal(record['code'], code, `${what}: expected code ${code}, got ${describeError(error)}`)
  for (const [key, value] of Object.entries(fields)) {
    assert.deepEqual(record[key], value, `${what}: ${errorClass.brand}.${key}`)
  }
  return error as T
}

/**
 * Runs `action`, turning a rejection into a failure that names `what` (and keeps the error as `cause`).
 *
 * @returns what `action` resolved to
 */
export async function expectResolves<T>(action: () => Promise<T>, what: string): Promise<T> {
  try {
    return await action()
  } catch (error) {
    throw new assert.AssertionError({
      message: `${what}: rejected with ${describeError(error)}`,
      actual: error,
      operator: 'resolves',
    })
  }
}

/** Asserts two event lists are byte-exact, reporting the first differing index. */
export function assertSameEvents(actual: readonly unknown[], expected: readonly unknown[], what: string): void {
  const left = jsonOf(actual)
  const right = jsonOf(expected)
  if (left.length === right.length && left.every((text, index) => text === right[index])) return
  let index = 0
  while (index < left.length && index < right.length && left[index] === right[index]) index++
  assert.fail(
    `${what}: ${left.length} events, expected ${right.length}; first difference at index ${index}:\n  got      ${left[index] ?? '(none)'}\n  expected ${right[index] ?? '(none)'}`,
  )
}

/** Whether two byte arrays are equal. */
export function sameBytes(left: Uint8Array, right: Uint8Array): boolean {
  return Buffer.from(left.buffer, left.byteOffset, left.byteLength).equals(right)
}

/** A copy of `bytes` (hooks may return views of live buffers). */
export function copyBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes)
}

/**
 * "Stored X" of the scenarios: `create`, `acquire`, one `append` per batch, `release`.
 *
 * @param adapter - the adapter
 * @param header - the header to create
 * @param batches - the batches, contiguous from seq 0
 */
export async function storeLog(
  adapter: PersistenceAdapter,
  header: SessionHeader,
  batches: readonly (readonly SessionEvent[])[],
): Promise<void> {
  await adapter.create(header)
  const lease = await adapter.acquire(header.id)
  try {
    let seq = 0
    for (const batch of batches) {
      await adapter.append(header.id, batch, { expectedSeq: seq, lease })
      seq += batch.length
    }
  } finally {
    await lease.release()
  }
}

/** What a log looks like from outside: revision, events and (with the `bytes` hook) bytes. */
export interface StorageSnapshot {
  /** The revision `load` returned. */
  readonly revision: string
  /** The events' JSON texts. */
  readonly events: readonly string[]
  /** The stored bytes, with the `bytes` hook. */
  readonly bytes: Uint8Array | undefined
}

/**
 * Loads a log and reads its bytes (when the target has the hook).
 *
 * @returns the snapshot
 */
export async function snapshotOf(
  target: ConformanceTarget,
  adapter: PersistenceAdapter,
  sessionId: string,
): Promise<StorageSnapshot> {
  const log = await expectResolves(() => adapter.load(sessionId), `load('${sessionId}')`)
  const bytes = target.bytes === undefined ? undefined : copyBytes(await target.bytes.read(sessionId))
  return { revision: log.revision, events: jsonOf(log.events), bytes }
}

/** Asserts a log is as `before` (byte-for-byte, same revision, same events). */
export async function assertUnchanged(
  target: ConformanceTarget,
  adapter: PersistenceAdapter,
  sessionId: string,
  before: StorageSnapshot,
  what: string,
): Promise<void> {
  const after = await snapshotOf(target, adapter, sessionId)
  assert.equal(after.revision, before.revision, `${what}: the revision changed`)
  assert.deepEqual(after.events, before.events, `${what}: the loaded events changed`)
  if (before.bytes !== undefined && after.bytes !== undefined) {
    assert.ok(sameBytes(after.bytes, before.bytes), `${what}: the stored bytes changed`)
  }
}

/** The two holders of one session after a takeover, and the log it holds. */
export interface TakeoverState {
  /** The conformance target. */
  readonly target: ConformanceTarget
  /** The old holder's adapter instance and its lost lease. */
  readonly adapter: PersistenceAdapter
  /** The old holder's lease. */
  readonly lease: Lease
  /** The new holder's adapter instance. */
  readonly other: PersistenceAdapter
  /** The new holder's lease. */
  readonly taken: Lease
  /** The session id. */
  readonly sessionId: string
  /** The stored log (seqs from 0). */
  readonly log: readonly SessionEvent[]
  /** The events appended next (seqs from `log.length`). */
  readonly next: readonly SessionEvent[]
}

/**
 * Checks fencing after a takeover: the old holder's append and commitRepair are `LeaseLostError`
 * and change nothing, its lease signal is aborted, and the new holder's append goes through.
 *
 * @param state - the holders and the logs
 * @param when - how the takeover happened, for the messages (e.g. `'after the takeover'`)
 */
export async function assertOldHolderFenced(state: TakeoverState, when: string): Promise<void> {
  const { target, adapter, lease, other, taken, sessionId, log, next } = state
  const before = await snapshotOf(target, other, sessionId)
  let what = `an append by the old holder ${when}`
  expectError(
    await rejectionOf(() => adapter.append(sessionId, next, { expectedSeq: log.length, lease }), what),
    LeaseLostError,
    ErrorCode.LEASE_LOST,
    what,
  )
  assert.equal(lease.signal.aborted, true, 'the old lease.signal is aborted')
  what = `a commitRepair by the old holder ${when}`
  expectError(
    await rejectionOf(
      () => adapter.commitRepair(sessionId, undefined, interruptedTurnClosers([...log, ...next])),
      what,
    ),
    LeaseLostError,
    ErrorCode.LEASE_LOST,
    what,
  )
  await assertUnchanged(target, other, sessionId, before, 'after the old holder was refused')
  await expectResolves(
    () => other.append(sessionId, next, { expectedSeq: log.length, lease: taken }),
    'an append by the new holder',
  )
}
