/**
 * Reading 64-bit integer columns: drivers hand them back as numbers (better-sqlite3), strings
 * (pg's `bigint`) or bigints, and the store wants safe JavaScript integers.
 *
 * @module
 */

/**
 * A 64-bit integer column's value as a safe integer.
 *
 * @param value - the column value as the driver returned it
 * @param column - the column name, for the error
 * @returns the integer
 * @throws `TypeError` when the value is not a safe integer in any of the driver spellings
 * @internal
 */
export function sqlInteger(value: unknown, column: string): number {
  let number = Number.NaN
  if (typeof value === 'number') number = value
  else if (typeof value === 'bigint' || (typeof value === 'string' && /^-?\d+$/.test(value))) number = Number(value)
  if (!Number.isSafeInteger(number)) {
    throw new TypeError(`column ${column} holds ${String(value)}, not a safe integer`)
  }
  return number
}
