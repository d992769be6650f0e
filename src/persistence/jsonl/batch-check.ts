/**
 * The check line of a plain JSONL log written with `checksum: 'batch'`: before each batch, one line
 * `{"crc32":"<8 hex>","bytes":<n>}` holding the CRC-32 and length of the batch's lines that follow
 * it; the line written with the header also carries `"header":"<8 hex>"`, the CRC-32 of the header
 * line. A reader that meets a check line verifies exactly the bytes it names, so a record damaged in
 * a way that still parses is reported instead of loaded, and lines no check line covers (a log
 * written before the option was on) load as they always did.
 *
 * @module
 */
import { crc32 } from './crc32.js'

/** A parsed check line. */
export interface BatchCheck {
  /** The CRC-32 of the covered bytes. */
  readonly crc32: number
  /** How many bytes after the check line it covers: whole lines, newlines included. */
  readonly bytes: number
  /** The CRC-32 of the header line (newline included): only on the line written with the header. */
  readonly header?: number
}

const HEX = /^[0-9a-f]{8}$/

function hex(value: number): string {
  return value.toString(16).padStart(8, '0')
}

/**
 * The check line for `covered`, the batch bytes it precedes.
 *
 * @param covered - the batch's lines, as written
 * @param header - the header line's bytes, for the check line written with it
 * @returns the line, newline included
 * @internal
 */
export function batchCheckLine(covered: Uint8Array, header?: Uint8Array): string {
  const headerPart = header === undefined ? '' : `,"header":"${hex(crc32(header))}"`
  return `{"crc32":"${hex(crc32(covered))}","bytes":${covered.length}${headerPart}}\n`
}

/**
 * Reads a parsed line as a check line.
 *
 * @param value - a parsed JSON line
 * @returns the check, or `undefined` when `value` is not exactly a check line
 * @internal
 */
export function asBatchCheck(value: unknown): BatchCheck | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  const checksum = record['crc32']
  const bytes = record['bytes']
  const header = record['header']
  if (typeof checksum !== 'string' || !HEX.test(checksum)) return undefined
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0) return undefined
  if (header !== undefined && (typeof header !== 'string' || !HEX.test(header))) return undefined
  if (keys.length !== (header === undefined ? 2 : 3)) return undefined
  const check = { crc32: Number.parseInt(checksum, 16), bytes }
  return header === undefined ? check : { ...check, header: Number.parseInt(header, 16) }
}
