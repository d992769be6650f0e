/**
 * The rows of `yoke_events`: one per event, or one per packed chunk run, each holding its record's
 * JSON text as JSONL lines hold it, and their decoding with the checks a reader applies.
 *
 * @module
 */
import type { JsonValue } from '../../session/json-value.js'
import { jsonText } from '../../session/json-text.js'
import type { SessionEvent } from '../../session/session-event.js'
import { isEventEnvelope } from '../jsonl/jsonl-codec.js'
import { type ChunkRunRow, isChunkRunRow, packRecords, unpackRow } from '../pack-chunks.js'
import type { SqlRow } from './sql-executor.js'
import { sqlInteger } from './sql-integer.js'

/**
 * One row to insert.
 *
 * @internal
 */
export interface EventRow {
  /** The seq of the event, or of a run's first member. */
  readonly seq: number
  /** The seq of the event, or of a run's last member. */
  readonly lastSeq: number
  /** The JSON text of the record. */
  readonly body: string
}

/**
 * The rows of one batch: runs of chunk deltas packed as in JSONL, every other event as its JSON
 * text (the caller's measured text when given, so nothing is stringified twice).
 *
 * @param events - the batch, seqs contiguous
 * @param texts - `JSON.stringify` of each event, index for index, when the caller has them
 * @returns the rows, in seq order
 * @internal
 */
export function eventRowsOf(events: readonly SessionEvent[], texts: readonly string[] | undefined): EventRow[] {
  const measured = texts?.length === events.length ? texts : undefined
  const rows: EventRow[] = []
  let at = 0
  for (const record of packRecords(events)) {
    // packRecords keeps every unpacked event as the same object, in order; a run stands for its members.
    if (record === events[at]) {
      rows.push({
        seq: record.seq,
        lastSeq: record.seq,
        body: measured?.[at] ?? jsonText(record as unknown as JsonValue),
      })
      at++
    } else {
      const run = record as ChunkRunRow
      rows.push({
        seq: run.seq0,
        lastSeq: run.seq0 + run.values.length - 1,
        body: jsonText(run as unknown as JsonValue),
      })
      at += run.values.length
    }
  }
  return rows
}

/**
 * What {@link decodeEventRows} read.
 *
 * @internal
 */
export interface DecodedRows {
  /** The events of the valid rows, in order (fresh `JSON.parse` results). */
  readonly events: SessionEvent[]
  /** The seq the next valid row would have started at. */
  readonly nextSeq: number
  /** The seq of the first row that does not parse, is no record, or breaks the seq sequence. */
  readonly damagedSeq?: number
}

function parse(body: unknown): unknown {
  if (typeof body !== 'string') return undefined
  try {
    return JSON.parse(body) as unknown
  } catch {
    return undefined
  }
}

/**
 * Decodes rows `(seq, last_seq, body)` ordered by seq, starting at `firstSeq`: each must parse as
 * an event envelope or a chunk run whose seqs match its columns and continue the previous row.
 * Reading stops at the first row that does not.
 *
 * @param rows - the rows, by seq
 * @param firstSeq - the seq the first row must start at (a run may start before it when reading from a seq)
 * @param fromSeq - events before it are left out
 * @returns the events and where reading stopped
 * @internal
 */
export function decodeEventRows(rows: readonly SqlRow[], firstSeq: number | undefined, fromSeq = 0): DecodedRows {
  const events: SessionEvent[] = []
  let expected = firstSeq
  for (const row of rows) {
    const seq = sqlInteger(row['seq'], 'yoke_events.seq')
    const lastSeq = sqlInteger(row['last_seq'], 'yoke_events.last_seq')
    if (expected !== undefined && seq !== expected) return { events, nextSeq: expected, damagedSeq: seq }
    const value = parse(row['body'])
    if (isEventEnvelope(value) && value.seq === seq && lastSeq === seq) {
      if (seq >= fromSeq) events.push(value)
    } else if (isChunkRunRow(value) && value.seq0 === seq && lastSeq === seq + value.values.length - 1) {
      for (const event of unpackRow(value)) if (event.seq >= fromSeq) events.push(event)
    } else {
      return { events, nextSeq: seq, damagedSeq: seq }
    }
    expected = lastSeq + 1
  }
  return { events, nextSeq: expected ?? fromSeq }
}
