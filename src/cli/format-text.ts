/**
 * Small text helpers of the human-readable CLI output.
 *
 * @module
 */
import type { UsageTotals } from './turn-summaries.js'

/**
 * A count with its noun, singular for one.
 *
 * @param value - the count
 * @param noun - the singular noun
 * @returns e.g. `'1 step'`, `'2 steps'`
 */
export function plural(value: number, noun: string): string {
  return `${value} ${noun}${value === 1 ? '' : 's'}`
}

/**
 * Token usage as `<in> in / <out> out tokens`.
 *
 * @param usage - the totals
 * @returns the text
 */
export function usageText(usage: UsageTotals): string {
  return `${usage.inputTokens} in / ${usage.outputTokens} out tokens`
}

/**
 * A JSON document as the CLI prints it: indented by two spaces, ending with a newline.
 *
 * @param value - the document
 * @returns the text
 */
export function jsonDocument(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}
