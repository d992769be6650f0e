/**
 * The one reading of a resume point (`Last-Event-ID`) that every session stream shares.
 *
 * @module
 */

const seqPattern = /^(0|[1-9][0-9]*)$/

/**
 * @internal A `Last-Event-ID` value as a seq: a number that is a non-negative safe integer, or its
 * decimal spelling without sign, leading zeros or spaces.
 *
 * @param value - the header value or a number
 * @returns the seq, or `undefined` when the value is not one
 */
export function parseSeq(value: string | number): number | undefined {
  const seq = typeof value === 'number' ? value : seqPattern.test(value) ? Number(value) : Number.NaN
  return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined
}
