import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { PersistenceCorruptionError } from '../../src/errors/persistence-corruption-error.js'
import {
  type JsonlPersistence,
  type JsonlPersistenceOptions,
  jsonlPersistence,
} from '../../src/persistence/jsonl/jsonl-persistence.js'
import { scanLog } from '../../src/persistence/jsonl/scan-log.js'
import { interruptedTurnClosers } from '../../src/session/interrupted-turn-closers.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'
import { L1, logOf, TS, UM } from '../session/builders.js'

const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }
const json = (value: unknown): string => JSON.stringify(value)

let dir: string
let opened: JsonlPersistence[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-checksum-'))
  opened = []
})

afterEach(async () => {
  for (const adapter of opened) await adapter.close()
  await rm(dir, { recursive: true, force: true })
})

function J(options: Partial<JsonlPersistenceOptions> = {}): JsonlPersistence {
  const adapter = jsonlPersistence({ dir, ...options })
  opened.push(adapter)
  return adapter
}

const path = (): string => join(dir, 's1.jsonl')

async function store(adapter: JsonlPersistence, batches: readonly (readonly SessionEvent[])[], create = true) {
  if (create) await adapter.create(H1)
  const lease = await adapter.acquire('s1')
  let seq = create ? 0 : (await adapter.load('s1')).events.length
  for (const batch of batches) {
    await adapter.append('s1', batch, { expectedSeq: seq, lease })
    seq += batch.length
  }
  await lease.release()
}

/** What loading `bytes` does: the events, a reported tail, or a typed error. */
function outcomeOf(bytes: Uint8Array, expected: readonly SessionEvent[]): 'same' | 'reported' | 'silent' {
  try {
    const result = scanLog(bytes, { sessionId: 's1', location: 'sweep' })
    if (result.torn !== undefined) return 'reported'
    const same = json(result.header) === json(H1) && json(result.events) === json(expected)
    return same ? 'same' : 'silent'
  } catch (error) {
    expect(error, String(error)).toHaveProperty('code')
    return 'reported'
  }
}

function sweep(full: Uint8Array, expected: readonly SessionEvent[]): Record<'same' | 'reported' | 'silent', number> {
  const counts = { same: 0, reported: 0, silent: 0 }
  for (let bit = 0; bit < full.length * 8; bit++) {
    const copy = new Uint8Array(full)
    copy[bit >> 3] = (copy[bit >> 3] ?? 0) ^ (1 << (bit & 7))
    const outcome = outcomeOf(copy, expected)
    counts[outcome]++
  }
  return counts
}

describe("jsonlPersistence checksum: 'batch'", () => {
  it('writes a check line with the header and before each batch; loads the same events', async () => {
    const events = logOf([...L1(), TS(2), UM('second')])
    await store(J({ checksum: 'batch' }), [events.slice(0, 6), events.slice(6)])
    const lines = (await readFile(path(), 'utf8')).split('\n')
    expect(lines[1]).toMatch(/^\{"crc32":"[0-9a-f]{8}","bytes":\d+,"header":"[0-9a-f]{8}"\}$/)
    // The first batch is written with the header, under the header's check line.
    expect(lines.filter((line) => line.startsWith('{"crc32"'))).toHaveLength(2)
    for (const readChunkBytes of [1, 7, 65_536]) {
      const loaded = await J({ readChunkBytes }).load('s1')
      expect(loaded.torn).toBeUndefined()
      expect(loaded.events.map(json)).toEqual(events.map(json))
    }
  })

  it('every single flipped bit of a checksummed log is reported; without checksums some load silently', async () => {
    const events = logOf([...L1(), TS(2), UM('second')])
    await store(J({ checksum: 'batch' }), [events.slice(0, 3), events.slice(3, 6), events.slice(6)])
    const checked = sweep(new Uint8Array(await readFile(path())), events)
    expect(checked.silent).toBe(0)
    expect(checked.reported).toBeGreaterThan(0)
    await rm(path())
    await store(J(), [events.slice(0, 3), events.slice(3, 6), events.slice(6)])
    const unchecked = sweep(new Uint8Array(await readFile(path())), events)
    expect(unchecked.silent).toBeGreaterThan(0)
  })

  it('a damaged record that still parses is CORRUPT_LOG naming the file, byte and line; nothing changes', async () => {
    const events = logOf([...L1(), TS(2), UM('second')])
    await store(J({ checksum: 'batch' }), [events.slice(0, 6), events.slice(6)])
    const text = await readFile(path(), 'utf8')
    const damaged = text.replace('"seq":3,"time":', '"seq":3,"time":9')
    expect(damaged).not.toBe(text)
    await writeFile(path(), damaged)
    const lines = text.split('\n')
    const batchLine = 3
    const batchByte = Buffer.byteLength(`${lines.slice(0, batchLine - 1).join('\n')}\n`)
    const error = await rejectionOf(J().load('s1'))
    expectError(error, PersistenceCorruptionError, 'CORRUPT_LOG', {
      location: path(),
      line: batchLine,
      offset: batchByte,
    })
    expect(await readFile(path(), 'utf8')).toBe(damaged)
    // The last batch too: every byte is there, so it is damage, not a torn append.
    const last = text.replace('"text":"second"', '"text":"secOnd"')
    await writeFile(path(), last)
    expectError(await rejectionOf(J().load('s1')), PersistenceCorruptionError, 'CORRUPT_LOG')
  })

  it('a damaged header is CORRUPT_HEADER', async () => {
    await store(J({ checksum: 'batch' }), [logOf(L1())])
    const text = await readFile(path(), 'utf8')
    await writeFile(path(), text.replace('"cwd":"/w"', '"cwd":"/x"'))
    expectError(await rejectionOf(J().load('s1')), PersistenceCorruptionError, 'CORRUPT_HEADER', { line: 1 })
  })

  it('a batch cut short is a torn tail from its check line; the repair leaves a log that loads and takes appends', async () => {
    const events = logOf([...L1(), TS(2), UM('second')])
    await store(J({ checksum: 'batch' }), [events.slice(0, 6), events.slice(6)])
    const text = await readFile(path(), 'utf8')
    const lastCheck = text.lastIndexOf('{"crc32"')
    // Cut after the first complete line of the last batch.
    const cut = text.indexOf('\n', text.indexOf('\n', lastCheck) + 1) + 1
    await writeFile(path(), text.slice(0, cut))
    const adapter = J({ checksum: 'batch' })
    const lease = await adapter.acquire('s1')
    const first = await adapter.load('s1')
    expect(first.torn).toMatchObject({ kind: 'torn', offset: Buffer.byteLength(text.slice(0, lastCheck)) })
    expect(first.events.map(json)).toEqual(events.slice(0, 6).map(json))
    await adapter.commitRepair('s1', first.torn, interruptedTurnClosers(first.events))
    const second = await adapter.load('s1')
    expect(second.torn).toBeUndefined()
    expect(second.events.slice(0, 6).map(json)).toEqual(events.slice(0, 6).map(json))
    await adapter.append('s1', [{ type: 'test/note', seq: second.events.length, time: 1, data: {} }], {
      expectedSeq: second.events.length,
      lease,
    })
    await lease.release()
    const third = await J().load('s1')
    expect(third.torn).toBeUndefined()
    expect(third.events).toHaveLength(second.events.length + 1)
  })

  it('a log written without checksums keeps loading, and batches appended with them are checked', async () => {
    const events = logOf([...L1(), TS(2), UM('second')])
    await store(J(), [events.slice(0, 6)])
    await store(J({ checksum: 'batch' }), [events.slice(6)], false)
    const text = await readFile(path(), 'utf8')
    expect(text.split('\n')[1]).not.toMatch(/crc32/)
    expect(text.split('\n')[7]).toMatch(/^\{"crc32"/)
    expect((await J().load('s1')).events.map(json)).toEqual(events.map(json))
    await writeFile(path(), text.replace('"text":"second"', '"text":"secOnd"'))
    expectError(await rejectionOf(J().load('s1')), PersistenceCorruptionError, 'CORRUPT_LOG', { line: 9 })
  })

  it('rejects an unknown checksum option', () => {
    expectError(
      thrownBy(() => jsonlPersistence({ dir, checksum: 'sha256' as never })),
      ConfigError,
      'CONFIG_INVALID',
      { option: 'checksum' },
    )
  })
})
