/** Small statistics shared by the runner and the children. */

/** The median of `values` (the lower middle of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right)
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN
}
