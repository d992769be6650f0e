/**
 * Field-by-field copies of the values a model stream is mostly made of, text and reasoning deltas
 * and the `assistant/chunk` payload around one: what the generic {@link snapshotJson} walk would
 * give, for a fraction of its cost.
 *
 * @module
 */
import type { JsonValue } from '../json-value.js'
import type { StreamChunk } from '../stream-chunk.js'
import { isSharedObject } from './shared-snapshots.js'

/** Whether `value` is a plain object whose own keys are exactly `keys`, in that order, each enumerable. */
function hasExactKeys(value: object, keys: readonly [string, string, string]): boolean {
  if (Object.getPrototypeOf(value) !== Object.prototype) return false
  // The string keys (enumerable or not) in order, no symbol key, and three enumerable ones.
  // (Two narrow lists cost far less than one Reflect.ownKeys.)
  const names = Object.getOwnPropertyNames(value)
  if (names.length !== 3 || names[0] !== keys[0] || names[1] !== keys[1] || names[2] !== keys[2]) return false
  if (Object.getOwnPropertySymbols(value).length !== 0) return false
  let enumerable = 0
  for (const _key in value) enumerable++
  return enumerable === 3
}

/** A number `JSON` keeps as it is and the chunk schema accepts as an index (a safe integer ≥ 0, not −0). */
function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0)
}

/**
 * A frozen copy of a text or reasoning delta: only for a plain object whose own keys are exactly
 * `type, index, text`, in that order and enumerable, each read once and valid, so the copy is
 * what `snapshotJson` gives and the chunk schema accepts. `undefined` for anything else (an
 * invalid delta too): the caller takes the generic path, which names the problem.
 *
 * @param value - anything
 * @returns the frozen copy, or `undefined`
 * @internal
 */
export function copyStreamDelta(value: unknown): StreamChunk | undefined {
  if (typeof value !== 'object' || value === null || !hasExactKeys(value, deltaKeys)) return undefined
  const record = value as { readonly type: unknown; readonly index: unknown; readonly text: unknown }
  const type = record.type
  if (type !== 'text-delta' && type !== 'reasoning-delta') return undefined
  const index = record.index
  if (!isIndex(index)) return undefined
  const text = record.text
  if (typeof text !== 'string') return undefined
  return Object.freeze({ type, index, text })
}

/**
 * A frozen copy of an `assistant/chunk` payload `{ turn, step, chunk }` around a text or
 * reasoning delta (keys in that order, turn and step safe integers), else `undefined` for the
 * generic copy. The payload schema still checks the copy.
 *
 * @param value - the payload handed to `append`
 * @returns the frozen copy, or `undefined`
 * @internal
 */
export function copyDeltaPayload(value: unknown): JsonValue | undefined {
  if (typeof value !== 'object' || value === null || !hasExactKeys(value, payloadKeys)) return undefined
  const record = value as { readonly turn: unknown; readonly step: unknown; readonly chunk: unknown }
  const turn = record.turn
  const step = record.step
  if (!isIndex(turn) || !isIndex(step)) return undefined
  const given = record.chunk
  // A chunk recorded as shared (deep-frozen lossless JSON) is kept, as the generic copy keeps it.
  const chunk = typeof given === 'object' && given !== null && isSharedObject(given) ? given : copyStreamDelta(given)
  return chunk === undefined ? undefined : (Object.freeze({ turn, step, chunk }) as unknown as JsonValue)
}

const deltaKeys = ['type', 'index', 'text'] as const
const payloadKeys = ['turn', 'step', 'chunk'] as const
