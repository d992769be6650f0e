/**
 * The argument checks every built-in adapter applies the same way: a header given to `create`,
 * a seq argument, and the id order of listings.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { buildSessionHeader, type SessionHeader } from '../session/session-header.js'
import { assertStorableId } from './session-file-name.js'

/**
 * The header `create` registers: its id checked first (`INVALID_SESSION_ID`), then the whole
 * header, complete (nothing filled in).
 *
 * @param header - what the caller passed
 * @returns the validated, frozen header
 * @throws `PersistenceError` `INVALID_SESSION_ID`; `SessionHeaderError`
 * @internal
 */
export function headerToCreate(header: unknown): SessionHeader {
  const id = typeof header === 'object' && header !== null ? (header as { readonly id?: unknown }).id : undefined
  if (typeof header === 'object' && header !== null) assertStorableId(id)
  return buildSessionHeader(header, typeof id === 'string' ? id : '', -1, true)
}

/**
 * Whether `value` is a non-negative safe integer (a seq).
 *
 * @internal
 */
export function isSafeNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/**
 * Checks a seq argument (`expectedSeq`, `fromSeq`).
 *
 * @param argument - its name, for the error
 * @param value - what the caller passed
 * @throws `InvalidArgumentError` unless it is a non-negative safe integer
 * @internal
 */
export function assertSeqArgument(argument: string, value: unknown): asserts value is number {
  if (!isSafeNonNegative(value)) {
    throw new InvalidArgumentError({ argument, reason: 'must be a non-negative safe integer', value })
  }
}

/**
 * Orders session ids by UTF-16 code units, as listings sort them whatever the storage's collation.
 *
 * @internal
 */
export function compareIds(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0
}
