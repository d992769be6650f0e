import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  type ChunkRunRow,
  isChunkRunRow,
  isPackable,
  MIN_CHUNK_RUN,
  packRecords,
  unpackRow,
} from '../../src/persistence/pack-chunks.js'
import { encodeBatch } from '../../src/persistence/jsonl/jsonl-codec.js'
import type { JsonObject, JsonValue } from '../../src/session/json-value.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import { AM, type EventPlan, logOf, SE, SS, TE, TS, text, UM } from '../session/builders.js'

/** `CH(x)`: a text delta of the open step (turn 1, step 1). */
function CH(value: string, chunk: JsonObject = { type: 'text-delta', index: 0 }): EventPlan {
  return { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { ...chunk, text: value } }, options: {} }
}

function chunkEvent(seq: number, time: number, chunk: JsonObject, turn = 1, step = 1): SessionEvent {
  return { type: 'assistant/chunk', seq, time, data: { turn, step, chunk } }
}

/** JSON(pack(batch)) decoded back, as a reader sees it. */
function decode(records: readonly unknown[]): SessionEvent[] {
  return records.flatMap((record) => {
    const value: unknown = JSON.parse(JSON.stringify(record))
    return isChunkRunRow(value) ? unpackRow(value) : [value as SessionEvent]
  })
}

const fiveDeltaStep = logOf([
  TS(1),
  SS(1, 1),
  UM('q'),
  CH('a'),
  CH('b'),
  CH('c'),
  CH('d'),
  CH('e'),
  AM(1, 1, text('abcde')),
  SE(1, 1),
  TE(1, 'completed'),
])

describe('isPackable', () => {
  test('accepts text, reasoning and tool-call deltas whose delta field is the last key', () => {
    expect(isPackable(chunkEvent(0, 1, { type: 'text-delta', index: 0, text: 'a' }))).toBe(true)
    expect(isPackable(chunkEvent(0, 1, { type: 'reasoning-delta', index: 2, text: '' }))).toBe(true)
    expect(isPackable(chunkEvent(0, 1, { type: 'tool-call-delta', index: 1, id: 'c', argumentsDelta: '{' }))).toBe(true)
    expect(
      isPackable(chunkEvent(0, 1, { type: 'tool-call-delta', index: 1, id: 'c', name: 'f', argumentsDelta: '{' })),
    ).toBe(true)
    expect(isPackable(chunkEvent(0, 1, { index: 0, type: 'text-delta', text: 'a' }))).toBe(true)
  })

  test.each([
    ['the delta field is not last', chunkEvent(0, 1, { type: 'text-delta', text: 'a', index: 0 })],
    ['the delta field is not a string', chunkEvent(0, 1, { type: 'text-delta', index: 0, text: 1 })],
    ['the chunk has an extra key', chunkEvent(0, 1, { type: 'text-delta', index: 0, extra: 1, text: 'a' })],
    ['the chunk lacks a key', chunkEvent(0, 1, { type: 'text-delta', text: 'a' })],
    ['the kind is not a delta', chunkEvent(0, 1, { type: 'block-start', index: 0, text: 'a' })],
    ['a tool-call delta lacks its id', chunkEvent(0, 1, { type: 'tool-call-delta', index: 0, argumentsDelta: 'a' })],
    ['a template value is not primitive', chunkEvent(0, 1, { type: 'text-delta', index: [0], text: 'a' })],
    [
      'the envelope has an extra key',
      { ...chunkEvent(0, 1, { type: 'text-delta', index: 0, text: 'a' }), ignorable: true } as SessionEvent,
    ],
    [
      'the data has an extra key',
      {
        type: 'assistant/chunk',
        seq: 0,
        time: 1,
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'a' }, x: 1 },
      },
    ],
    [
      'the data keys are out of order',
      {
        type: 'assistant/chunk',
        seq: 0,
        time: 1,
        data: { step: 1, turn: 1, chunk: { type: 'text-delta', index: 0, text: 'a' } },
      },
    ],
    [
      'the envelope keys are out of order',
      {
        seq: 0,
        type: 'assistant/chunk',
        time: 1,
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'a' } },
      } as SessionEvent,
    ],
    [
      'the type is not assistant/chunk',
      {
        type: 'test/note',
        seq: 0,
        time: 1,
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'a' } },
      },
    ],
  ])('rejects a chunk when %s', (_label, event) => {
    expect(isPackable(event)).toBe(false)
  })
})

describe('packRecords', () => {
  test('a step with five deltas: they become the exact row of line 5, the rest stays verbatim', () => {
    const records = packRecords(fiveDeltaStep)
    expect(records).toHaveLength(7)
    expect(JSON.stringify(records[3])).toBe(
      '{"type":"chunk-run","seq0":3,"time0":1000,"turn":1,"step":1,"chunk":{"type":"text-delta","index":0},"field":"text","dt":[0,0,0,0],"values":["a","b","c","d","e"]}',
    )
    for (const index of [0, 1, 2, 4, 5, 6]) expect(records[index]).toBe(fiveDeltaStep[index < 3 ? index : index + 4])
    expect(encodeBatch(fiveDeltaStep, { packChunks: true }).split('\n')).toHaveLength(8)
    expect(encodeBatch(fiveDeltaStep, { packChunks: false }).split('\n')).toHaveLength(12)
  })

  test(`runs shorter than ${MIN_CHUNK_RUN} are written verbatim`, () => {
    const events = [
      chunkEvent(0, 1, { type: 'text-delta', index: 0, text: 'a' }),
      chunkEvent(1, 1, { type: 'text-delta', index: 0, text: 'b' }),
    ]
    expect(packRecords(events)).toEqual(events)
  })

  test('runs break on a seq gap, another turn or step, another template, or an unsafe time gap', () => {
    const delta = (value: string): JsonObject => ({ type: 'text-delta', index: 0, text: value })
    const base = [chunkEvent(0, 10, delta('a')), chunkEvent(1, 11, delta('b')), chunkEvent(2, 12, delta('c'))]
    const kinds = (events: SessionEvent[]): string[] => packRecords(events).map((record) => record.type)
    expect(kinds(base)).toEqual(['chunk-run'])
    expect(kinds([...base.slice(0, 2), chunkEvent(3, 12, delta('c'))])).toEqual(Array(3).fill('assistant/chunk'))
    expect(kinds([...base.slice(0, 2), chunkEvent(2, 12, delta('c'), 2)])).toEqual(Array(3).fill('assistant/chunk'))
    expect(kinds([...base.slice(0, 2), chunkEvent(2, 12, delta('c'), 1, 2)])).toEqual(Array(3).fill('assistant/chunk'))
    expect(kinds([...base.slice(0, 2), chunkEvent(2, 12, { type: 'text-delta', index: 1, text: 'c' })])).toEqual(
      Array(3).fill('assistant/chunk'),
    )
    expect(kinds([...base.slice(0, 2), chunkEvent(2, 12, { type: 'reasoning-delta', index: 0, text: 'c' })])).toEqual(
      Array(3).fill('assistant/chunk'),
    )
    expect(kinds([...base.slice(0, 2), chunkEvent(2, 12, { index: 0, type: 'text-delta', text: 'c' })])).toEqual(
      Array(3).fill('assistant/chunk'),
    )
    const far = [
      chunkEvent(0, -Number.MAX_SAFE_INTEGER, delta('a')),
      chunkEvent(1, Number.MAX_SAFE_INTEGER, delta('b')),
      chunkEvent(2, Number.MAX_SAFE_INTEGER, delta('c')),
    ]
    expect(kinds(far)).toEqual(Array(3).fill('assistant/chunk'))
  })

  test('tool-call runs keep the id and name in the template and allow negative time gaps', () => {
    const chunk = (value: string): JsonObject => ({
      type: 'tool-call-delta',
      index: 1,
      id: 'c1',
      name: 'echo',
      argumentsDelta: value,
    })
    const events = [chunkEvent(5, 100, chunk('{"a"')), chunkEvent(6, 90, chunk(':')), chunkEvent(7, 95, chunk('1}'))]
    const [row] = packRecords(events) as [ChunkRunRow]
    expect(row).toEqual({
      type: 'chunk-run',
      seq0: 5,
      time0: 100,
      turn: 1,
      step: 1,
      chunk: { type: 'tool-call-delta', index: 1, id: 'c1', name: 'echo' },
      field: 'argumentsDelta',
      dt: [-10, 5],
      values: ['{"a"', ':', '1}'],
    })
    expect(decode([row]).map((event) => JSON.stringify(event))).toEqual(events.map((event) => JSON.stringify(event)))
  })

  test('runs never span calls: two batches of two chunks give no row', () => {
    const events = logOf([CH('a'), CH('b'), CH('c'), CH('d')])
    expect(packRecords(events.slice(0, 2)).map((record) => record.type)).toEqual(['assistant/chunk', 'assistant/chunk'])
    expect(packRecords(events.slice(2)).map((record) => record.type)).toEqual(['assistant/chunk', 'assistant/chunk'])
  })
})

describe('isChunkRunRow and unpackRow', () => {
  const row = JSON.parse(JSON.stringify(packRecords(fiveDeltaStep)[3])) as Record<string, unknown>

  test('the row of the five-delta step decodes byte-exact to its five chunks', () => {
    expect(isChunkRunRow(row)).toBe(true)
    const members = unpackRow(row as unknown as ChunkRunRow)
    expect(members.map((event) => JSON.stringify(event))).toEqual(
      fiveDeltaStep.slice(3, 8).map((event) => JSON.stringify(event)),
    )
  })

  test('decoded members are fresh, unaliased objects', () => {
    const [first, second] = unpackRow(row as unknown as ChunkRunRow) as [SessionEvent, SessionEvent]
    const chunkOf = (event: SessionEvent): unknown => (event.data as JsonObject)['chunk']
    expect(chunkOf(first)).not.toBe(chunkOf(second))
    expect(first.data).not.toBe(second.data)
  })

  test.each([
    ['an extra key', { ...row, extra: 1 }],
    ['a missing key', { ...row, dt: undefined }],
    ['another type', { ...row, type: 'chunk-runs' }],
    ['an arity mismatch', { ...row, dt: [0, 0, 0] }],
    ['too many gaps', { ...row, dt: [0, 0, 0, 0, 0] }],
    ['a non-string value', { ...row, values: ['a', 'b', 3, 'd', 'e'] }],
    ['no values', { ...row, values: [], dt: [] }],
    ['a fractional seq0', { ...row, seq0: 1.5 }],
    ['a negative seq0', { ...row, seq0: -1 }],
    ['an unsafe last seq', { ...row, seq0: Number.MAX_SAFE_INTEGER - 1 }],
    ['an unsafe time0', { ...row, time0: 2 ** 53 }],
    ['an unsafe member time', { ...row, time0: Number.MAX_SAFE_INTEGER, dt: [0, 0, 0, 1] }],
    ['a fractional gap', { ...row, dt: [0, 0.5, 0, 0] }],
    ['a string turn', { ...row, turn: '1' }],
    ['a field of another kind', { ...row, field: 'argumentsDelta' }],
    ['a template holding its field', { ...row, chunk: { type: 'text-delta', index: 0, text: 'x' } }],
    ['a template lacking a key', { ...row, chunk: { type: 'text-delta' } }],
    ['a template with an object value', { ...row, chunk: { type: 'text-delta', index: { n: 0 } } }],
    ['a non-delta template', { ...row, chunk: { type: 'text', index: 0 } }],
    ['an array', [row]],
    ['null', null],
  ])('rejects a row with %s', (_label, value) => {
    expect(isChunkRunRow(value)).toBe(false)
  })
})

describe('property: decoding JSON(pack(batch)) is byte-exact', () => {
  const deltaValue = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 6 }),
    fc.constantFrom('\uD83D', '\uDE00', 'ü😀', '"\\\n', ''),
  )
  const template = fc.oneof(
    fc.constantFrom<JsonObject>(
      { type: 'text-delta', index: 0 },
      { index: 0, type: 'text-delta' },
      { type: 'reasoning-delta', index: 1 },
    ),
    fc.constantFrom<JsonObject>(
      { type: 'tool-call-delta', index: 2, id: 'c1' },
      { type: 'tool-call-delta', index: 2, id: 'c1', name: 'echo' },
      { type: 'tool-call-delta', id: 'c2', index: 3, name: 'f' },
    ),
  )
  const chunkPlan = fc.record({
    template,
    values: fc.array(deltaValue, { minLength: 1, maxLength: 5 }),
    turn: fc.constantFrom(1, 2),
    step: fc.constantFrom(1, 2),
    misplaced: fc.boolean(),
  })
  const otherPlan = fc.record({ note: fc.jsonValue({ maxDepth: 2 }) })
  const plan = fc.array(
    fc.record({
      body: fc.oneof({ weight: 5, arbitrary: chunkPlan }, { weight: 1, arbitrary: otherPlan }),
      seqStep: fc.oneof(
        { weight: 8, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) },
      ),
      time: fc.oneof(
        fc.integer({ min: -5, max: 5 }),
        fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER),
      ),
    }),
    { maxLength: 40 },
  )
  type PlanItems = typeof plan extends fc.Arbitrary<infer T> ? T : never

  function buildBatch(items: PlanItems): SessionEvent[] {
    let seq = -1
    return items.flatMap((item): SessionEvent[] => {
      seq += item.seqStep
      if ('note' in item.body)
        return [{ type: 'test/note', seq, time: item.time, data: { note: item.body.note as JsonValue } }]
      const { template: kind, values, turn, step, misplaced } = item.body
      const field = kind['type'] === 'tool-call-delta' ? 'argumentsDelta' : 'text'
      return values.map((value, index) => {
        if (index > 0) seq++
        const chunk: JsonObject = misplaced ? { [field]: value, ...kind } : { ...kind, [field]: value }
        return chunkEvent(seq, item.time + index, chunk, turn, step)
      })
    })
  }

  test('every batch round-trips with JSON.stringify equal, key order included', () => {
    let rows = 0
    fc.assert(
      fc.property(plan, (items) => {
        const batch = buildBatch(items)
        const records = packRecords(batch)
        for (const record of records) {
          const isRow = record.type === 'chunk-run'
          expect(isChunkRunRow(JSON.parse(JSON.stringify(record)))).toBe(isRow)
          if (isRow) expect((record as ChunkRunRow).values.length).toBeGreaterThanOrEqual(MIN_CHUNK_RUN)
          if (isRow) rows++
        }
        expect(decode(records).map((event) => JSON.stringify(event))).toEqual(
          batch.map((event) => JSON.stringify(event)),
        )
      }),
      { numRuns: 300 },
    )
    expect(rows).toBeGreaterThan(50)
  })
})
