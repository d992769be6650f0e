import { describe, expect, test } from 'vitest'
import { PersistenceCorruptionError } from '../../src/errors/persistence-corruption-error.js'
import { SessionFormatUnsupportedError } from '../../src/errors/session-format-unsupported-error.js'
import { SessionHeaderError } from '../../src/errors/session-header-error.js'
import { encodeBatch, encodeHeaderLine, isEventEnvelope } from '../../src/persistence/jsonl/jsonl-codec.js'
import type { LogScannerOptions, ScanResult } from '../../src/persistence/jsonl/log-scanner.js'
import { createLogScanner, scanHeader, scanLog } from '../../src/persistence/jsonl/scan-log.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { AM, type EventPlan, logOf, SE, SS, TE, TS, text, UM } from '../session/builders.js'

const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }
const L1 = logOf([TS(1), SS(1, 1), UM('hi'), AM(1, 1, text('hello')), SE(1, 1), TE(1, 'completed')])
const options: LogScannerOptions = { sessionId: 's1', location: '/d/s1.jsonl' }
const utf8 = new TextEncoder()

function CH(value: string, turn = 2, step = 1): EventPlan {
  return {
    type: 'assistant/chunk',
    data: { turn, step, chunk: { type: 'text-delta', index: 0, text: value } },
    options: {},
  }
}

function lineOf(event: unknown): string {
  return `${JSON.stringify(event)}\n`
}

function logText(events: readonly SessionEvent[], packChunks = true): string {
  return encodeHeaderLine(H1) + encodeBatch(events, { packChunks })
}

function byteLength(value: string): number {
  return utf8.encode(value).length
}

function stringsOf(events: readonly SessionEvent[]): string[] {
  return events.map((event) => JSON.stringify(event))
}

function caught(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

/** Feeds `bytes` in pieces of `size`, from one reused buffer (the scanner must not retain it). */
function scanInPieces(bytes: Uint8Array, size: number, scanOptions: LogScannerOptions = options): ScanResult {
  const scanner = createLogScanner(scanOptions)
  const buffer = new Uint8Array(size)
  for (let at = 0; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, at + size)
    buffer.set(piece)
    scanner.push(buffer.subarray(0, piece.length))
    buffer.fill(0x7b)
  }
  return scanner.end()
}

describe('encodeHeaderLine', () => {
  test('line 1 is exact', () => {
    expect(encodeHeaderLine(H1)).toBe('{"type":"session","version":1,"id":"s1","createdAt":1000,"cwd":"/w"}\n')
  })

  test('writes every key in stored order, whatever the input order, and omits absent keys', () => {
    const header = {
      metadata: { z: 1, a: 2 },
      agentPreset: 'p',
      delegationDepth: 1,
      origin: 'subagent',
      seedLength: 6,
      parentSession: 's0',
      cwd: '/w',
      createdAt: 5,
      id: 's2',
      version: 1,
    } as SessionHeader
    expect(encodeHeaderLine(header)).toBe(
      '{"type":"session","version":1,"id":"s2","createdAt":5,"cwd":"/w","parentSession":"s0","seedLength":6,"origin":"subagent","delegationDepth":1,"agentPreset":"p","metadata":{"z":1,"a":2}}\n',
    )
    expect(encodeHeaderLine({ version: 1, id: 's3', createdAt: 0 })).toBe(
      '{"type":"session","version":1,"id":"s3","createdAt":0}\n',
    )
  })
})

describe('encodeBatch', () => {
  test('writes one compact line per record, newlines inside strings escaped', () => {
    const events = logOf([UM('a\nb'), TS(1)])
    const batch = encodeBatch(events, { packChunks: true })
    expect(batch).toBe(events.map(lineOf).join(''))
    expect(batch.split('\n')).toHaveLength(3)
    expect(encodeBatch([], { packChunks: true })).toBe('')
  })

  test('takes the texts measured by write-behind, packed rows excepted', () => {
    const chunk = (delta: string): EventPlan => ({
      type: 'assistant/chunk',
      data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: delta } },
      options: {},
    })
    const events = Object.freeze(logOf([TS(1), SS(1, 1), ...['a', 'b', 'c', 'd', 'e'].map(chunk), SE(1, 1)]))
    const marks = events.map((event) => `<${event.seq}>`)
    expect(encodeBatch(events, { packChunks: false, texts: marks })).toBe(marks.map((mark) => `${mark}\n`).join(''))
    const packed = encodeBatch(events, { packChunks: true, texts: marks }).split('\n')
    expect(packed.slice(0, 2)).toEqual(['<0>', '<1>'])
    expect(JSON.parse(packed[2] as string)).toMatchObject({
      type: 'chunk-run',
      seq0: 2,
      values: ['a', 'b', 'c', 'd', 'e'],
    })
    expect(packed.slice(3)).toEqual(['<7>', ''])
    expect(encodeBatch(events, { packChunks: false })).toBe(events.map(lineOf).join(''))
    // Only one text per event is taken.
    expect(encodeBatch(events, { packChunks: false, texts: marks.slice(1) })).toBe(events.map(lineOf).join(''))
  })
})

describe('isEventEnvelope', () => {
  test.each([
    ['a minimal event', { type: 't/x', seq: 0, time: -5, data: null }, true],
    [
      'every optional key',
      { type: 't/x', seq: 1, time: 0, data: {}, ignorable: true, surfaceOp: 'append', sourceEventSeqs: [0] },
      true,
    ],
    [
      'a replace surfaceOp',
      { type: 't/x', seq: 1, time: 0, data: {}, surfaceOp: { op: 'replace', start: 0, end: 0 } },
      true,
    ],
    ['an extra key', { type: 't/x', seq: 0, time: 0, data: {}, extra: 1 }, false],
    ['an empty type', { type: '', seq: 0, time: 0, data: {} }, false],
    ['a string seq', { type: 't/x', seq: '0', time: 0, data: {} }, false],
    ['a negative seq', { type: 't/x', seq: -1, time: 0, data: {} }, false],
    ['a fractional time', { type: 't/x', seq: 0, time: 0.5, data: {} }, false],
    ['an unsafe time', { type: 't/x', seq: 0, time: 2 ** 53, data: {} }, false],
    ['no data', { type: 't/x', seq: 0, time: 0 }, false],
    ['ignorable false', { type: 't/x', seq: 0, time: 0, data: {}, ignorable: false }, false],
    ['a bad surfaceOp', { type: 't/x', seq: 0, time: 0, data: {}, surfaceOp: 'prepend' }, false],
    ['bad sources', { type: 't/x', seq: 0, time: 0, data: {}, sourceEventSeqs: ['0'] }, false],
    ['an array', [], false],
    ['a string', 'x', false],
  ])('%s → %s', (_label, value, expected) => {
    expect(isEventEnvelope(value)).toBe(expected)
  })
})

describe('scanLog: committed logs', () => {
  test('the header deep-equals the s1 header, events are byte-exact, no torn tail, 7 lines', () => {
    const log = logText(L1)
    expect(log.split('\n')).toHaveLength(8)
    const result = scanLog(log, options)
    expect(result.header).toEqual(H1)
    expect(stringsOf(result.events)).toEqual(stringsOf(L1))
    expect(result.torn).toBeUndefined()
    expect(result.nextSeq).toBe(6)
    expect(result.committedBytes).toBe(byteLength(log))
    expect(result.totalBytes).toBe(byteLength(log))
  })

  test('events are fresh objects on every scan', () => {
    const log = logText(L1)
    const first = scanLog(log, options).events
    const second = scanLog(log, options).events
    expect(first[0]).not.toBe(second[0])
    expect(first[0]).not.toBe(L1[0])
    expect(Object.isFrozen(first[0])).toBe(false)
  })

  test('chunk-run rows decode in place and advance the seq by their member count', () => {
    const batch = logOf([
      TS(1),
      SS(1, 1),
      UM('q'),
      CH('a', 1),
      CH('b', 1),
      CH('c', 1),
      CH('d', 1),
      CH('e', 1),
      AM(1, 1, text('abcde')),
      SE(1, 1),
      TE(1, 'completed'),
    ])
    const packed = logText(batch)
    expect(packed.split('\n')).toHaveLength(9)
    expect(packed.split('\n')[4]).toBe(
      '{"type":"chunk-run","seq0":3,"time0":1000,"turn":1,"step":1,"chunk":{"type":"text-delta","index":0},"field":"text","dt":[0,0,0,0],"values":["a","b","c","d","e"]}',
    )
    expect(stringsOf(scanLog(packed, options).events)).toEqual(stringsOf(batch))
    expect(stringsOf(scanLog(logText(batch, false), options).events)).toEqual(stringsOf(batch))
  })

  test('key order of data survives', () => {
    const note: SessionEvent = { type: 'test/note', seq: 0, time: 1000, data: { z: 1, a: { y: 2, b: 3 } } }
    const [loaded] = scanLog(logText([note]), options).events
    expect(JSON.stringify(loaded)).toBe('{"type":"test/note","seq":0,"time":1000,"data":{"z":1,"a":{"y":2,"b":3}}}')
  })

  test('unknown types are the read gates’ business, kept byte-exact', () => {
    const future = '{"type":"future/thing","seq":6,"time":1000,"data":{}}'
    const ignorable = '{"type":"future/thing","seq":6,"time":1000,"data":{},"ignorable":true}'
    expect(JSON.stringify(scanLog(`${logText(L1)}${future}\n`, options).events[6])).toBe(future)
    expect(JSON.stringify(scanLog(`${logText(L1)}${ignorable}\n`, options).events[6])).toBe(ignorable)
  })

  test('a header naming another id is returned as is (identity is a read gate)', () => {
    const log = `${encodeHeaderLine({ ...H1, id: 's2' })}${encodeBatch(L1, { packChunks: true })}`
    expect(scanLog(log, options).header.id).toBe('s2')
  })

  test('fromSeq materializes only the suffix, rows included', () => {
    const batch = logOf([TS(1), SS(1, 1), CH('a', 1), CH('b', 1), CH('c', 1), SE(1, 1)])
    const log = logText(batch)
    expect(scanLog(log, { ...options, fromSeq: 3 }).events.map((event) => event.seq)).toEqual([3, 4, 5])
    expect(scanLog(log, { ...options, fromSeq: 5 }).events.map((event) => event.seq)).toEqual([5])
    expect(scanLog(log, { ...options, fromSeq: 6 }).events).toEqual([])
    expect(scanLog(log, { ...options, fromSeq: 6 }).nextSeq).toBe(6)
  })

  test('scanHeader reads only line 1: damage after it is not seen', () => {
    expect(scanHeader(`${encodeHeaderLine(H1)}xx\n{"type":`, options)).toEqual(H1)
    const scanner = createLogScanner({ ...options, headerOnly: true })
    scanner.push(utf8.encode(encodeHeaderLine(H1).slice(0, 10)))
    expect(scanner.header).toBeUndefined()
    scanner.push(utf8.encode(`${encodeHeaderLine(H1).slice(10)}{"seq":9}\n`))
    expect(scanner.header).toEqual(H1)
    expect(scanner.end().events).toEqual([])
  })
})

describe('scanLog: torn tails', () => {
  const L1Bytes = byteLength(logText(L1))

  test('an unterminated last record is a torn tail', () => {
    const events = logOf([
      TS(1),
      SS(1, 1),
      UM('hi'),
      AM(1, 1, text('hello')),
      SE(1, 1),
      TE(1, 'completed'),
      TS(2),
      SS(2, 1),
    ])
    const committed = logText(events)
    const result = scanLog(`${committed}{"type":"assistant/chunk","seq":8,"ti`, options)
    expect(stringsOf(result.events)).toEqual(stringsOf(events))
    expect(result.committedBytes).toBe(byteLength(committed))
    expect(result.torn).toEqual({
      kind: 'torn',
      defect: 'unterminated',
      offset: byteLength(committed),
      line: 10,
      droppedBytes: 37,
    })
  })

  test('a complete record without its newline is still unterminated (never salvaged)', () => {
    const next = JSON.stringify(logOf([TS(1), TS(2)])[1])
    const result = scanLog(`${logText(L1)}${next.replace('"seq":1', '"seq":6')}`, options)
    expect(result.events).toHaveLength(6)
    expect(result.torn?.defect).toBe('unterminated')
  })

  test('an unparsable last line is a torn tail at line 8', () => {
    const result = scanLog(`${logText(L1)}{"type":"turn/sta\n`, options)
    expect(stringsOf(result.events)).toEqual(stringsOf(L1))
    expect(result.torn).toEqual({ kind: 'torn', defect: 'unparsable', offset: L1Bytes, line: 8, droppedBytes: 18 })
  })

  test('garbage lines after the defect are part of the torn region', () => {
    const result = scanLog(`${logText(L1)}{"type":\nxx\n\n{"seq"`, options)
    expect(result.torn).toMatchObject({ kind: 'torn', defect: 'unparsable', line: 8, offset: L1Bytes })
    expect(result.torn?.droppedBytes).toBe(byteLength('{"type":\nxx\n\n{"seq"'))
  })

  test('an empty line is a defect', () => {
    expect(scanLog(`${logText(L1)}\n`, options).torn).toMatchObject({ kind: 'torn', defect: 'unparsable', line: 8 })
  })

  test('a line that parses but is no envelope is unparsable', () => {
    const result = scanLog(`${logText(L1)}{"type":"turn/start","seq":6,"time":1000}\n`, options)
    expect(result.torn).toMatchObject({ kind: 'torn', defect: 'unparsable', line: 8 })
  })

  test('NUL bytes: a zero-filled tail is torn with defect nul', () => {
    expect(scanLog(`${logText(L1)}\0\0\0\0\n`, options).torn).toMatchObject({
      kind: 'torn',
      defect: 'nul',
      line: 8,
      offset: L1Bytes,
    })
    expect(scanLog(`${logText(L1)}\0\0\0\0`, options).torn).toMatchObject({ kind: 'torn', defect: 'nul', line: 8 })
    expect(scanLog(`${logText(L1)}{"type":"tu\0\0\n\0\0`, options).torn).toMatchObject({ kind: 'torn', defect: 'nul' })
  })

  test('invalid UTF-8 makes a line unparsable', () => {
    const head = utf8.encode(logText(L1))
    const bad = new Uint8Array([...head, 0x7b, 0xff, 0xfe, 0x7d, 0x0a])
    expect(scanLog(bad, options).torn).toMatchObject({
      kind: 'torn',
      defect: 'unparsable',
      line: 8,
      offset: head.length,
    })
    const note = utf8.encode(`{"type":"t/x","seq":6,"time":0,"data":"\u00fc"}\n`)
    const broken = note.slice()
    broken[broken.indexOf(0xc3)] = 0xff
    expect(scanLog([head, broken], options).torn?.defect).toBe('unparsable')
    expect(scanLog([head, note], options).events).toHaveLength(7)
  })
})

describe('scanLog: corruption', () => {
  const L1Bytes = byteLength(logText(L1))
  const TS2 = lineOf(
    logOf([TS(1), SS(1, 1), UM('hi'), AM(1, 1, text('hello')), SE(1, 1), TE(1, 'completed'), TS(2)])[6],
  )

  test('a record-valid line after a defect is CORRUPT_LOG', () => {
    const error = caught(() => scanLog(`${logText(L1)}xx\n${TS2}`, options))
    expect(PersistenceCorruptionError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'CORRUPT_LOG',
      line: 8,
      offset: L1Bytes,
      defect: 'unparsable',
      location: '/d/s1.jsonl',
      sessionId: 's1',
    })
  })

  test('with truncateAtCorruption the damage is returned as kind corrupt after the valid prefix', () => {
    const damaged = `${logText(L1)}xx\n${TS2}`
    const result = scanLog(damaged, { ...options, truncateAtCorruption: true })
    expect(stringsOf(result.events)).toEqual(stringsOf(L1))
    expect(result.committedBytes).toBe(L1Bytes)
    expect(result.torn).toEqual({
      kind: 'corrupt',
      defect: 'unparsable',
      offset: L1Bytes,
      line: 8,
      droppedBytes: byteLength(`xx\n${TS2}`),
    })
  })

  test('any later record-valid line counts, whatever its seq, and a chunk-run row too', () => {
    const foreign = '{"type":"x/y","seq":99,"time":0,"data":1}\n'
    expect(caught(() => scanLog(`${logText(L1)}xx\nyy\n${foreign}zz`, options))).toMatchObject({
      code: 'CORRUPT_LOG',
      line: 8,
    })
    const row = encodeBatch(logOf([CH('a'), CH('b'), CH('c')]), { packChunks: true })
    expect(row.startsWith('{"type":"chunk-run"')).toBe(true)
    expect(caught(() => scanLog(`${logText(L1)}xx\n${row}`, options))).toMatchObject({ code: 'CORRUPT_LOG', line: 8 })
  })

  test('record-valid text after the last NUL of a defective line is CORRUPT_LOG', () => {
    const shifted = TS2.replace('"seq":6', '"seq":7')
    expect(caught(() => scanLog(`${logText(L1)}\0\0\0${TS2}`, options))).toMatchObject({
      code: 'CORRUPT_LOG',
      defect: 'nul',
      line: 8,
      offset: L1Bytes,
    })
    expect(caught(() => scanLog(`${logText(L1)}{"ty\n\0\0${shifted}`, options))).toMatchObject({
      code: 'CORRUPT_LOG',
      defect: 'unparsable',
      line: 8,
    })
    expect(scanLog(`${logText(L1)}\0\0${TS2.slice(0, -1)}`, options).torn).toMatchObject({
      kind: 'torn',
      defect: 'nul',
    })
  })

  test('a record-valid line with a wrong seq is SEQ_MISMATCH', () => {
    const wrong = TS2.replace('"seq":6', '"seq":9')
    const error = caught(() => scanLog(`${logText(L1)}${wrong}`, options))
    expect(PersistenceCorruptionError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'SEQ_MISMATCH',
      line: 8,
      expected: 6,
      actual: 9,
      offset: L1Bytes,
      location: '/d/s1.jsonl',
    })
  })

  test('SEQ_MISMATCH applies anywhere before the first defect, rows included', () => {
    const lines = logText(L1).split('\n')
    lines[3] = lines[3]!.replace('"seq":2', '"seq":3')
    expect(caught(() => scanLog(lines.join('\n'), options))).toMatchObject({
      code: 'SEQ_MISMATCH',
      line: 4,
      expected: 2,
      actual: 3,
    })
    const row = encodeBatch(logOf([TS(1), CH('a'), CH('b'), CH('c')]).slice(1), { packChunks: true })
    expect(caught(() => scanLog(`${logText(L1)}${row}`, options))).toMatchObject({
      code: 'SEQ_MISMATCH',
      line: 8,
      expected: 6,
      actual: 1,
    })
  })

  test('SEQ_MISMATCH with truncateAtCorruption is a corrupt tail starting at that line', () => {
    const wrong = TS2.replace('"seq":6', '"seq":9')
    const result = scanLog(`${logText(L1)}${wrong}`, { ...options, truncateAtCorruption: true })
    expect(result.events).toHaveLength(6)
    expect(result.torn).toMatchObject({ kind: 'corrupt', line: 8, offset: L1Bytes })
  })
})

describe('scanLog: the header', () => {
  const body = encodeBatch(L1, { packChunks: true })

  test('version 2 is FORMAT_TOO_NEW despite a foreign key', () => {
    const error = caught(() =>
      scanLog(`{"type":"session","version":2,"id":"s1","createdAt":1,"shards":[3]}\n${body}`, options),
    )
    expect(SessionFormatUnsupportedError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'FORMAT_TOO_NEW',
      storedVersion: 2,
      supportedVersion: 1,
      direction: 'newer',
      location: '/d/s1.jsonl',
    })
  })

  test('version 0 is FORMAT_TOO_OLD', () => {
    expect(caught(() => scanLog(`{"type":"session","version":0,"id":"s1","createdAt":1}\n`, options))).toMatchObject({
      code: 'FORMAT_TOO_OLD',
      storedVersion: 0,
      supportedVersion: 1,
      direction: 'older',
    })
  })

  test('a header failing the schema is CORRUPT_HEADER with the schema error as cause', () => {
    const error = caught(() => scanLog(`{"type":"session","version":1,"id":"s1","createdAt":1.5}\n${body}`, options))
    expect(error).toMatchObject({ code: 'CORRUPT_HEADER', line: 1, offset: 0, location: '/d/s1.jsonl' })
    expect(SessionHeaderError.is((error as Error).cause)).toBe(true)
  })

  test.each([
    ['an array', '[1,2]\n'],
    ['not JSON', '{"type":"session"\n'],
    ['another type', '{"type":"sessions","version":1,"id":"s1","createdAt":1}\n'],
    ['no type', '{"version":1,"id":"s1","createdAt":1}\n'],
    ['a string version', '{"type":"session","version":"1","id":"s1","createdAt":1}\n'],
    ['no version', '{"type":"session","id":"s1","createdAt":1}\n'],
    ['no id', '{"type":"session","version":1,"createdAt":1}\n'],
    ['a bad id', '{"type":"session","version":1,"id":"../x","createdAt":1}\n'],
    ['no createdAt', '{"type":"session","version":1,"id":"s1"}\n'],
    ['an unknown key', '{"type":"session","version":1,"id":"s1","createdAt":1,"x":1}\n'],
    ['a relative cwd', '{"type":"session","version":1,"id":"s1","createdAt":1,"cwd":"w"}\n'],
    ['an unterminated header', '{"type":"session","version":1,"id":"s1","createdAt":1}'],
    ['an empty log', ''],
    ['a NUL header', '\0\0\0\n'],
  ])('%s is CORRUPT_HEADER line 1', (_label, header) => {
    const error = caught(() => scanLog(header, options))
    expect(PersistenceCorruptionError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CORRUPT_HEADER', line: 1, location: '/d/s1.jsonl' })
  })

  test('the scanner throws as soon as the header line is complete', () => {
    const scanner = createLogScanner(options)
    expect(() => scanner.push(utf8.encode('{"type":"session","version":3,"id":"s1","createdAt":1}\n'))).toThrow(
      SessionFormatUnsupportedError,
    )
  })
})

describe('every cut of the fixture loads', () => {
  const fixture = logOf([
    TS(1),
    SS(1, 1),
    UM('hi'),
    AM(1, 1, text('hello')),
    SE(1, 1),
    TE(1, 'completed'),
    TS(2),
    SS(2, 1),
    UM('ü😀'),
    CH('a'),
    CH('ü'),
    CH('😀'),
    CH('d'),
  ])
  const bytes = utf8.encode(logText(fixture))
  const headerEnd = byteLength(encodeHeaderLine(H1))
  /** Byte offset after each record line, with the seq count it completes. */
  const ends: { end: number; count: number }[] = []
  let at = headerEnd
  let count = 0
  for (const line of encodeBatch(fixture, { packChunks: true }).split('\n').slice(0, -1)) {
    const parsed = JSON.parse(line) as { values?: unknown[] }
    at += byteLength(`${line}\n`)
    count += parsed.values?.length ?? 1
    ends.push({ end: at, count })
  }

  test('the fixture holds one chunk-run row', () => {
    expect(ends).toHaveLength(10)
    expect(ends.at(-1)).toEqual({ end: bytes.length, count: 13 })
  })

  test('each cut k returns exactly the events whose line ends at or before k', () => {
    for (let cut = headerEnd; cut <= bytes.length; cut++) {
      const result = scanLog(bytes.subarray(0, cut), options)
      const complete = ends.filter((entry) => entry.end <= cut).at(-1)
      const expected = complete?.count ?? 0
      expect(result.events.length, `cut ${cut}`).toBe(expected)
      expect(result.committedBytes).toBe(complete?.end ?? headerEnd)
      if (result.committedBytes === cut) expect(result.torn).toBeUndefined()
      else
        expect(result.torn).toMatchObject({
          kind: 'torn',
          defect: 'unterminated',
          offset: result.committedBytes,
          droppedBytes: cut - result.committedBytes,
        })
    }
    expect(stringsOf(scanLog(bytes, options).events)).toEqual(stringsOf(fixture))
  })

  test('cuts inside the header line are CORRUPT_HEADER', () => {
    for (const cut of [0, 1, headerEnd - 1]) {
      expect(caught(() => scanLog(bytes.subarray(0, cut), options))).toMatchObject({ code: 'CORRUPT_HEADER' })
    }
  })
})

describe('pieces of any size decode identically', () => {
  const fixture = logOf([
    TS(1),
    SS(1, 1),
    UM('ü😀'),
    CH('a', 1),
    CH('ü', 1),
    CH('😀€', 1),
    CH('\uD83D', 1),
    CH('\uDE00', 1),
    UM('\uD83D'),
    UM('\uDE00'),
  ])
  const bytes = utf8.encode(logText(fixture))
  const whole = scanLog(bytes, options)

  test.each([1, 2, 3, 5, 65_536])('readChunkBytes %i', (size) => {
    const result = scanInPieces(bytes, size)
    expect(stringsOf(result.events)).toEqual(stringsOf(fixture))
    expect(result).toEqual(whole)
  })

  test('lone surrogates in consecutive chunks round-trip as lone code units', () => {
    const texts = whole.events.slice(6, 8).map((event) => (event.data as { chunk: { text: string } }).chunk.text)
    expect(texts).toEqual(['\uD83D', '\uDE00'])
    expect(texts.map((value) => value.length)).toEqual([1, 1])
    const unpacked = logOf([CH('\uD83D'), CH('\uDE00')])
    const loaded = scanInPieces(utf8.encode(logText(unpacked)), 1).events
    expect(loaded.map((event) => (event.data as { chunk: { text: string } }).chunk.text)).toEqual(['\uD83D', '\uDE00'])
  })

  test('torn and corrupt results are identical across piece sizes', () => {
    const torn = utf8.encode(`${logText(fixture)}{"type":"ü😀`)
    const corrupt = utf8.encode(`${logText(fixture)}ü\n${lineOf({ type: 'x/y', seq: 1, time: 0, data: 'ü😀' })}`)
    const reference = scanLog(torn, options)
    const corruptReference = scanLog(corrupt, { ...options, truncateAtCorruption: true })
    for (const size of [1, 2, 3, 5, 65_536]) {
      expect(scanInPieces(torn, size)).toEqual(reference)
      expect(scanInPieces(corrupt, size, { ...options, truncateAtCorruption: true })).toEqual(corruptReference)
    }
    expect(reference.torn?.droppedBytes).toBe(byteLength('{"type":"ü😀'))
  })
})
