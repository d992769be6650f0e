/**
 * Chunk runs: consecutive `assistant/chunk` deltas of one batch
 * stored as one compact row, decoded back byte-exact.
 *
 * @module
 */
import type { JsonObject, JsonValue } from '../session/json-value.js'
import type { SessionEvent } from '../session/session-event.js'

/** The fewest packable events that become one {@link ChunkRunRow}. */
export const MIN_CHUNK_RUN = 3

/** The delta field of a packable chunk: `text` (text, reasoning) or `argumentsDelta` (tool call). */
export type ChunkDeltaField = 'text' | 'argumentsDelta'

/**
 * One stored row holding a run of `assistant/chunk` events. Member `k` decodes to
 * `{type:'assistant/chunk', seq: seq0 + k, time: time0 + Σdt[0..k−1], data:{turn, step,
 * chunk:{...chunk, [field]: values[k]}}}`.
 */
export interface ChunkRunRow {
  /** Always `'chunk-run'` (no `/`, so never an event type). */
  readonly type: 'chunk-run'
  /** The seq of the first member. */
  readonly seq0: number
  /** The time of the first member. */
  readonly time0: number
  /** The members' `data.turn`. */
  readonly turn: number
  /** The members' `data.step`. */
  readonly step: number
  /** The members' chunk without its delta field, key order kept. */
  readonly chunk: JsonObject
  /** The name of the delta field. */
  readonly field: ChunkDeltaField
  /** Time gaps between consecutive members (`values.length − 1` of them; may be negative). */
  readonly dt: readonly number[]
  /** The members' delta strings, in order. */
  readonly values: readonly string[]
}

/** The keys of a packable chunk kind other than its delta field, and whether `name` is optional. */
interface DeltaKind {
  readonly field: ChunkDeltaField
  readonly required: readonly string[]
  readonly optional: readonly string[]
}

const textKind: DeltaKind = { field: 'text', required: ['type', 'index'], optional: [] }
const toolCallKind: DeltaKind = { field: 'argumentsDelta', required: ['type', 'index', 'id'], optional: ['name'] }

function deltaKindOf(type: unknown): DeltaKind | undefined {
  switch (type) {
    case 'text-delta':
    case 'reasoning-delta':
      return textKind
    case 'tool-call-delta':
      return toolCallKind
    default:
      return undefined
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isPrimitive(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

/** Whether the template keys (the chunk without its field) are exactly those of `kind`. */
function hasTemplateKeys(keys: readonly string[], kind: DeltaKind): boolean {
  let required = 0
  let optional = 0
  for (const key of keys) {
    if (kind.required.includes(key)) required++
    else if (kind.optional.includes(key)) optional++
    else return false
  }
  return required === kind.required.length && optional <= kind.optional.length
}

/**
 * Whether `event` may be part of a chunk run: an `assistant/chunk` with envelope keys exactly
 * `type, seq, time, data`, `data` keys exactly `turn, step, chunk` (integer turn and step), and a
 * delta chunk with exactly its kind's keys whose delta field is a string and its last key.
 *
 * @param event - a committed event
 * @returns `true` when packable
 */
export function isPackable(event: SessionEvent): boolean {
  return packableChunk(event) !== undefined
}

/** The chunk of a packable event, else `undefined`. */
function packableChunk(event: SessionEvent): Record<string, unknown> | undefined {
  if (event.type !== 'assistant/chunk') return undefined
  if (!hasKeysInOrder(event, envelopeKeys)) return undefined
  if (!Number.isSafeInteger(event.seq) || !Number.isSafeInteger(event.time)) return undefined
  const data = event.data
  if (!isPlainObject(data) || !hasKeysInOrder(data, dataKeys)) return undefined
  if (!Number.isSafeInteger(data['turn']) || !Number.isSafeInteger(data['step'])) return undefined
  const chunk = data['chunk']
  if (!isPlainObject(chunk)) return undefined
  const kind = deltaKindOf(chunk['type'])
  if (kind === undefined) return undefined
  const keys = Object.keys(chunk)
  if (keys[keys.length - 1] !== kind.field || typeof chunk[kind.field] !== 'string') return undefined
  const templateKeys = keys.slice(0, -1)
  if (!hasTemplateKeys(templateKeys, kind)) return undefined
  for (const key of templateKeys) if (!isPrimitive(chunk[key])) return undefined
  return chunk
}

const envelopeKeys = ['type', 'seq', 'time', 'data'] as const
const dataKeys = ['turn', 'step', 'chunk'] as const

function hasKeysInOrder(value: object, expected: readonly string[]): boolean {
  let index = 0
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false
    if (key !== expected[index]) return false
    index++
  }
  return index === expected.length
}

/** Whether two packable chunks share a template: same keys in the same order, same values. */
function sameTemplate(left: Record<string, unknown>, right: Record<string, unknown>): boolean {
  const leftKeys = Object.keys(left)
  const rightKeys = Object.keys(right)
  if (leftKeys.length !== rightKeys.length) return false
  for (let index = 0; index < leftKeys.length - 1; index++) {
    const key = leftKeys[index]!
    if (key !== rightKeys[index] || left[key] !== right[key]) return false
  }
  return true
}

/**
 * Packs one batch for storage: each run of at least {@link MIN_CHUNK_RUN} packable chunks with
 * contiguous seqs, equal turn, step and template and safe-integer time gaps becomes one
 * {@link ChunkRunRow}; every other event is kept as is (same object), in order. Runs never span
 * calls.
 *
 * @param events - one batch of committed events
 * @returns the records to write, in order
 */
export function packRecords(events: readonly SessionEvent[]): (SessionEvent | ChunkRunRow)[] {
  const records: (SessionEvent | ChunkRunRow)[] = []
  let index = 0
  while (index < events.length) {
    const first = events[index]!
    const chunk = packableChunk(first)
    if (chunk === undefined) {
      records.push(first)
      index++
      continue
    }
    const data = first.data as JsonObject
    let end = index + 1
    let previous = first
    while (end < events.length) {
      const next = events[end]!
      const nextChunk = packableChunk(next)
      if (nextChunk === undefined || next.seq !== previous.seq + 1) break
      const nextData = next.data as JsonObject
      if (nextData['turn'] !== data['turn'] || nextData['step'] !== data['step']) break
      if (!sameTemplate(chunk, nextChunk) || !Number.isSafeInteger(next.time - previous.time)) break
      previous = next
      end++
    }
    if (end - index < MIN_CHUNK_RUN) {
      for (let member = index; member < end; member++) records.push(events[member]!)
    } else {
      records.push(rowOf(events, index, end, chunk))
    }
    index = end
  }
  return records
}

function rowOf(
  events: readonly SessionEvent[],
  start: number,
  end: number,
  chunk: Record<string, unknown>,
): ChunkRunRow {
  const first = events[start]!
  const data = first.data as JsonObject
  const field = deltaKindOf(chunk['type'])!.field
  const template: Record<string, JsonValue> = {}
  for (const key of Object.keys(chunk)) if (key !== field) template[key] = chunk[key] as JsonValue
  const dt: number[] = []
  const values: string[] = []
  for (let index = start; index < end; index++) {
    const event = events[index]!
    if (index > start) dt.push(event.time - events[index - 1]!.time)
    values.push(((event.data as JsonObject)['chunk'] as JsonObject)[field] as string)
  }
  return {
    type: 'chunk-run',
    seq0: first.seq,
    time0: first.time,
    turn: data['turn'] as number,
    step: data['step'] as number,
    chunk: template,
    field,
    dt,
    values,
  }
}

const rowKeys = new Set(['type', 'seq0', 'time0', 'turn', 'step', 'chunk', 'field', 'dt', 'values'])

/**
 * Whether `value` is a well-formed chunk-run row: exactly the row keys, `type
 * 'chunk-run'`, safe integer seqs and times (every member's), integer turn and step, a delta
 * template of primitive values without its field, `dt.length === values.length − 1` and string values.
 *
 * @param value - a parsed JSON value
 * @returns `true` for a decodable row
 */
export function isChunkRunRow(value: unknown): value is ChunkRunRow {
  if (!isPlainObject(value)) return false
  let count = 0
  for (const key in value) {
    if (!rowKeys.has(key) || !Object.hasOwn(value, key)) return false
    count++
  }
  if (count !== rowKeys.size || value['type'] !== 'chunk-run') return false
  const { seq0, time0, dt, values, chunk, field } = value
  if (!Number.isSafeInteger(value['turn']) || !Number.isSafeInteger(value['step'])) return false
  if (typeof seq0 !== 'number' || !Number.isSafeInteger(seq0) || seq0 < 0) return false
  if (typeof time0 !== 'number' || !Number.isSafeInteger(time0)) return false
  if (!Array.isArray(dt) || !Array.isArray(values) || values.length === 0 || dt.length !== values.length - 1)
    return false
  if (!Number.isSafeInteger(seq0 + values.length - 1)) return false
  for (const item of values) if (typeof item !== 'string') return false
  let time = time0
  for (const gap of dt) {
    if (typeof gap !== 'number' || !Number.isSafeInteger(gap)) return false
    time += gap
    if (!Number.isSafeInteger(time)) return false
  }
  if (!isPlainObject(chunk)) return false
  const kind = deltaKindOf(chunk['type'])
  if (kind === undefined || field !== kind.field) return false
  const templateKeys = Object.keys(chunk)
  if (!hasTemplateKeys(templateKeys, kind)) return false
  for (const key of templateKeys) if (!isPrimitive(chunk[key])) return false
  return true
}

/**
 * Decodes a row into its member events: fresh objects with keys in envelope order (`type,
 * seq, time, data`; `turn, step, chunk`; the template's keys, then the delta field).
 *
 * @param row - a row that passed {@link isChunkRunRow}
 * @returns the member events, seqs `seq0…`
 */
export function unpackRow(row: ChunkRunRow): SessionEvent[] {
  const events: SessionEvent[] = []
  const { values, dt, chunk, field, turn, step } = row
  const templateKeys = Object.keys(chunk)
  let time = row.time0
  for (let index = 0; index < values.length; index++) {
    if (index > 0) time += dt[index - 1]!
    const memberChunk: Record<string, JsonValue> = {}
    for (const key of templateKeys) memberChunk[key] = chunk[key] as JsonValue
    memberChunk[field] = values[index]!
    events.push({ type: 'assistant/chunk', seq: row.seq0 + index, time, data: { turn, step, chunk: memberChunk } })
  }
  return events
}
