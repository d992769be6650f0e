/**
 * The JSONL text encoding shared by the JSONL and memory adapters: the header line, a batch of
 * records (chunk deltas optionally packed), and the envelope check a reader applies to each line.
 *
 * @module
 */
import type { SessionEvent } from '../../session/session-event.js'
import { headerKeys, type SessionHeader } from '../../session/session-header.js'
import { type ChunkRunRow, packRecords } from '../pack-chunks.js'
import { jsonText } from '../../session/json-text.js'
import type { JsonValue } from '../../session/json-value.js'
import { isSafeNonNegative } from '../adapter-arguments.js'

/** The optional header keys, in stored order. */
const optionalHeaderKeys = headerKeys.slice(3)

/**
 * Encodes the header line: `{"type":"session", …header}` with keys in the order `type,
 * version, id, createdAt, cwd?, parentSession?, seedLength?, origin?, delegationDepth?,
 * agentPreset?, metadata?` (absent keys omitted), plus `\n`.
 *
 * @param header - a validated header
 * @returns the line, newline included
 */
export function encodeHeaderLine(header: SessionHeader): string {
  const line: Record<string, unknown> = {
    type: 'session',
    version: header.version,
    id: header.id,
    createdAt: header.createdAt,
  }
  for (const key of optionalHeaderKeys) if (header[key] !== undefined) line[key] = header[key]
  return `${jsonText(line as unknown as JsonValue)}\n`
}

/** Options of {@link encodeBatch}. */
export interface EncodeBatchOptions {
  /** Store runs of chunk deltas as one compact row each. */
  readonly packChunks: boolean
  /**
   * The JSON text of each event, index for index, when the caller has it already (write-behind
   * measures every event once): written as it is instead of stringifying again. Ignored unless
   * there is exactly one text per event.
   */
  readonly texts?: readonly string[] | undefined
}

/**
 * Encodes one batch as JSONL: each record as compact `JSON.stringify` output plus `\n`,
 * concatenated; with `packChunks`, runs of chunk deltas become rows.
 *
 * @param events - committed events, in order
 * @param options - whether to pack chunk runs, and the texts already measured
 * @returns the batch text (empty for no events)
 */
export function encodeBatch(events: readonly SessionEvent[], options: EncodeBatchOptions): string {
  const texts = options.texts?.length === events.length ? options.texts : undefined
  let text = ''
  if (!options.packChunks) {
    for (let index = 0; index < events.length; index++)
      text += `${texts?.[index] ?? jsonText(events[index] as unknown as JsonValue)}\n`
    return text
  }
  let at = 0
  for (const record of packRecords(events)) {
    // packRecords keeps every unpacked event as the same object, in order; a row stands for its members.
    if (record === events[at]) {
      text += `${texts?.[at] ?? jsonText(record as unknown as JsonValue)}\n`
      at++
    } else {
      text += `${jsonText(record as unknown as JsonValue)}\n`
      at += (record as ChunkRunRow).values.length
    }
  }
  return text
}

function isSurfaceOp(value: unknown): boolean {
  if (value === 'append') return true
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const op = value as Record<string, unknown>
  return (
    op['op'] === 'replace' &&
    isSafeNonNegative(op['start']) &&
    isSafeNonNegative(op['end']) &&
    Object.keys(op).length === 3
  )
}

/**
 * Whether `value` is a well-formed event envelope: keys ⊆ `type, seq, time,
 * data, ignorable, surfaceOp, sourceEventSeqs`; `type` a non-empty string; `seq` a non-negative and
 * `time` a safe integer; `data` present; `ignorable` absent or `true`; `surfaceOp` and
 * `sourceEventSeqs` well-typed when present. Payloads are not checked.
 *
 * @param value - a parsed JSON value or an event
 * @returns `true` for a well-formed envelope
 */
export function isEventEnvelope(value: unknown): value is SessionEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  for (const key in value) {
    switch (key) {
      case 'type':
      case 'seq':
      case 'time':
      case 'data':
      case 'ignorable':
      case 'surfaceOp':
      case 'sourceEventSeqs':
        break
      default:
        return false
    }
  }
  const record = value as Record<string, unknown>
  const type = record['type']
  if (typeof type !== 'string' || type.length === 0) return false
  if (!isSafeNonNegative(record['seq']) || !Number.isSafeInteger(record['time'])) return false
  if (record['data'] === undefined) return false
  const ignorable = record['ignorable']
  if (ignorable !== undefined && ignorable !== true) return false
  const surfaceOp = record['surfaceOp']
  if (surfaceOp !== undefined && !isSurfaceOp(surfaceOp)) return false
  const sources = record['sourceEventSeqs']
  if (sources !== undefined) {
    if (!Array.isArray(sources)) return false
    for (const seq of sources) if (!isSafeNonNegative(seq)) return false
  }
  return true
}
