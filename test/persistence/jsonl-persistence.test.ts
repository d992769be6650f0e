import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import * as wasmZstd from '@foxglove/wasm-zstd'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.js'
import { InvalidOptionsError } from '../../src/errors/invalid-options-error.js'
import { LeaseLostError } from '../../src/errors/lease-lost-error.js'
import { PersistenceCorruptionError } from '../../src/errors/persistence-corruption-error.js'
import { PersistenceError } from '../../src/errors/persistence-error.js'
import { SeqConflictError } from '../../src/errors/seq-conflict-error.js'
import { SessionHeaderError } from '../../src/errors/session-header-error.js'
import { SessionLockedError } from '../../src/errors/session-locked-error.js'
import { gzipCodec, zstdCodec } from '../../src/persistence/jsonl/frame-codec.js'
import { type JsonlFileSystem, nodeFileSystem } from '../../src/persistence/jsonl/jsonl-file-system.js'
import {
  type JsonlPersistence,
  type JsonlPersistenceOptions,
  jsonlPersistence,
} from '../../src/persistence/jsonl/jsonl-persistence.js'
import { readZstdFrameLayout } from '../../src/persistence/jsonl/zstd-frames.js'
import type { StoredLog } from '../../src/persistence/persistence-adapter.js'
import { createSession } from '../../src/session/create-session.js'
import { interruptedTurnClosers } from '../../src/session/interrupted-turn-closers.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { expectError, freshHarness } from '../session/session-helpers.js'
import { AM, type EventPlan, L1, logOf, SE, SS, TE, TS, text, UM } from '../session/builders.js'

const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }
const headerLine = '{"type":"session","version":1,"id":"s1","createdAt":1000,"cwd":"/w"}'

/** `assistant/chunk` with a text delta of turn 1 (or `turn`), step 1. */
function CH(delta: string, turn = 1, step = 1): EventPlan {
  return {
    type: 'assistant/chunk',
    data: { turn, step, chunk: { type: 'text-delta', index: 0, text: delta } },
    options: {},
  }
}

/** One completed turn followed by `extra`, seqs from 0. */
function log(extra: readonly EventPlan[] = []): SessionEvent[] {
  return logOf([...L1(), ...extra])
}

function lineOf(event: unknown): string {
  return `${JSON.stringify(event)}\n`
}

function json(value: unknown): string {
  return JSON.stringify(value)
}

let dir: string
let opened: JsonlPersistence[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-jsonl-'))
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

/** "Stored X": create, acquire, append each batch, release. */
async function store(
  adapter: JsonlPersistence,
  batches: readonly (readonly SessionEvent[])[],
  header: SessionHeader = H1,
): Promise<void> {
  await adapter.create(header)
  const lease = await adapter.acquire(header.id)
  let seq = 0
  for (const batch of batches) {
    await adapter.append(header.id, batch, { expectedSeq: seq, lease })
    seq += batch.length
  }
  await lease.release()
}

const file = (name = 's1.jsonl'): string => join(dir, name)
const bytesOf = async (name = 's1.jsonl'): Promise<Buffer> => readFile(file(name))
const textOf = async (name = 's1.jsonl'): Promise<string> => (await bytesOf(name)).toString('utf8')

/** A plain log file written directly: the header line, then `body`. */
async function writeLog(body: string, name = 's1.jsonl'): Promise<string> {
  const content = `${headerLine}\n${body}`
  await writeFile(file(name), content)
  return content
}

/** Loads, repairs with the closers under a lease, and loads again (the coordinator's cold load). */
async function loadAndRepair(
  adapter: JsonlPersistence,
  sessionId = 's1',
): Promise<{ first: StoredLog; closers: SessionEvent[]; second: StoredLog }> {
  const lease = await adapter.acquire(sessionId)
  try {
    const first = await adapter.load(sessionId)
    const closers = interruptedTurnClosers(first.events)
    await adapter.commitRepair(sessionId, first.torn, closers)
    const second = await adapter.load(sessionId)
    return { first, closers, second }
  } finally {
    await lease.release()
  }
}

describe('jsonlPersistence: layout, create and append', () => {
  it('stores a log as one header line and one line per event', async () => {
    const J1 = J()
    const events = log()
    await store(J1, [events])
    const loaded = await J1.load('s1')
    expect(loaded.header).toEqual(H1)
    expect(loaded.events.map(json)).toEqual(events.map(json))
    expect(loaded.torn).toBeUndefined()
    expect(loaded.location).toBe(file())
    const lines = (await textOf()).split('\n')
    expect(lines.pop()).toBe('')
    expect(lines).toHaveLength(7)
    expect(lines[0]).toBe(headerLine)
  })

  it('writes nothing before the first append; then the log is listed', async () => {
    const J1 = J()
    await J1.create(H1)
    const lease = await J1.acquire('s1')
    expect(await readdir(dir)).toEqual(['s1.lock'])
    expect((await J1.list()).headers).toEqual([])
    await J1.append('s1', logOf([TS(1)]), { expectedSeq: 0, lease })
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's1.lock'])
    expect((await J1.list()).headers).toEqual([H1])
    await lease.release()
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  it('forgets an unmaterialized registration when its lease ends, so the id can be created again', async () => {
    const J1 = J()
    await J1.create(H1)
    const lease = await J1.acquire('s1')
    await expect(J1.create(H1)).rejects.toSatisfy(
      (error) => PersistenceError.is(error) && error.code === 'SESSION_EXISTS',
    )
    await lease.release()
    expect(await readdir(dir)).toEqual([])
    await J1.create(H1)
  })

  it('rejects bad batches and leases without touching the file', async () => {
    const J1 = J()
    const events = log()
    await store(J1, [events])
    const before = await bytesOf()
    const { revision } = await J1.load('s1')
    const lease = await J1.acquire('s1')
    expectError(
      // Other events than the stored seq 5 (the same ones again are an idempotent re-append).
      await rejectionOf(J1.append('s1', [{ ...events[5]!, time: events[5]!.time + 1 }], { expectedSeq: 5, lease })),
      SeqConflictError,
      'SEQ_CONFLICT',
      {
        expectedSeq: 5,
        storedSeq: 6,
      },
    )
    const gap = logOf([...L1(), TS(2), SS(2, 1), SS(2, 1)])
    expectError(
      await rejectionOf(J1.append('s1', [gap[6]!, gap[8]!], { expectedSeq: 6, lease })),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'events',
      },
    )
    await J1.append('s1', [], { expectedSeq: 6, lease })
    await lease.release()
    expectError(await rejectionOf(J1.append('s1', [gap[6]!], { expectedSeq: 6, lease })), LeaseLostError, 'LEASE_LOST')
    expect(await bytesOf()).toEqual(before)
    expect((await J1.load('s1')).revision).toBe(revision)
  })

  it('validates the header and the id before any I/O', async () => {
    const J1 = J()
    expectError(
      await rejectionOf(J1.create({ ...H1, version: 2 } as unknown as SessionHeader)),
      SessionHeaderError,
      'INVALID_HEADER',
      {
        field: 'version',
      },
    )
    expectError(await rejectionOf(J1.create({ ...H1, createdAt: 1.5 })), SessionHeaderError, 'INVALID_HEADER', {
      field: 'createdAt',
    })
    expectError(await rejectionOf(J1.create({ ...H1, id: '../x' })), PersistenceError, 'INVALID_SESSION_ID')
    expect(await readdir(dir)).toEqual([])
  })

  it('refuses to create a stored id in any codec, and deletes every file of an id', async () => {
    const J1 = J()
    await store(J1, [log()])
    expectError(await rejectionOf(J1.create(H1)), PersistenceError, 'SESSION_EXISTS')
    await store(J({ compression: 'gzip' }), [logOf([TS(1)])], { ...H1, id: 's2' })
    expect(await readdir(dir)).toContain('s2.jsonl.gz')
    expectError(await rejectionOf(J1.create({ ...H1, id: 's2' })), PersistenceError, 'SESSION_EXISTS')
    const lease = await J1.acquire('s1')
    await J1.delete('s1')
    expect(lease.signal.aborted).toBe(true)
    expect((await readdir(dir)).filter((name) => name.startsWith('s1.'))).toEqual([])
    expectError(await rejectionOf(J1.load('s1')), PersistenceError, 'SESSION_NOT_FOUND')
  })

  it('deletes the quarantines, crashed temp files and index of an id with its log, and nothing of another id', async () => {
    const J1 = J()
    await store(J1, [log()])
    const leftovers = ['s1.jsonl.corrupt-777', 's1.jsonl.gz.corrupt-1', 's1.jsonl.0123456789ab.tmp', 's1.jsonl.idx']
    const others = [
      's10.jsonl',
      's1.jsonl.jsonl',
      's1.jsonl.jsonl.corrupt-5',
      's1.jsonl.corrupt-x',
      's1.jsonl.note',
      's1.lock.takeover',
    ]
    for (const name of [...leftovers, ...others]) await writeFile(file(name), 'x')
    await J1.delete('s1')
    expect((await readdir(dir)).sort()).toEqual([...others].sort())
    expectError(await rejectionOf(J1.delete('s1')), PersistenceError, 'SESSION_NOT_FOUND')
  })

  it('reads the committed suffix from a seq, never the closers', async () => {
    const J1 = J()
    const events = log()
    await store(J1, [events])
    expect((await J1.readFrom('s1', 0)).events.map(json)).toEqual(events.map(json))
    expect((await J1.readFrom('s1', 3)).events.map((event) => event.seq)).toEqual([3, 4, 5])
    expect((await J1.readFrom('s1', 6)).events).toEqual([])
    expectError(await rejectionOf(J1.readFrom('s1', -1)), InvalidArgumentError, 'INVALID_ARGUMENT', {
      argument: 'fromSeq',
    })
    expectError(await rejectionOf(J1.readFrom('s1', 1.5)), InvalidArgumentError, 'INVALID_ARGUMENT', {
      argument: 'fromSeq',
    })
    expectError(await rejectionOf(J1.readFrom('nope', 0)), PersistenceError, 'SESSION_NOT_FOUND')
    const lease = await J1.acquire('s1')
    await J1.append('s1', log([TS(2)]).slice(6), { expectedSeq: 6, lease })
    await lease.release()
    const before = await bytesOf()
    expect((await J1.readFrom('s1', 6)).events.map((event) => event.type)).toEqual(['turn/start'])
    expect(await bytesOf()).toEqual(before)
  })

  it('packs a run of chunk deltas into one row, byte-exact on load', async () => {
    const plans = [
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
    ]
    const events = logOf(plans)
    const J1 = J()
    await store(J1, [events])
    const lines = (await textOf()).split('\n').slice(0, -1)
    expect(lines).toHaveLength(8)
    expect(lines[4]).toBe(
      '{"type":"chunk-run","seq0":3,"time0":1000,"turn":1,"step":1,"chunk":{"type":"text-delta","index":0},"field":"text","dt":[0,0,0,0],"values":["a","b","c","d","e"]}',
    )
    expect((await J1.load('s1')).events.map(json)).toEqual(events.map(json))
    await rm(file())
    await store(J({ packChunks: false }), [events])
    expect((await textOf()).split('\n').slice(0, -1)).toHaveLength(12)
  })

  it('maps ids to file names and back', async () => {
    const J1 = J()
    const ids = ['s1', 'Run.2', 'con', 'NUL.x']
    for (const id of ids) await store(J1, [logOf([TS(1)])], { ...H1, id })
    expect((await readdir(dir)).sort()).toEqual(['Run.2.jsonl', 's1.jsonl', '~NUL.x.jsonl', '~con.jsonl'])
    expect((await J1.list()).headers.map((header) => header.id)).toEqual(['NUL.x', 'Run.2', 'con', 's1'])
    for (const id of ['', '.', '..', 'a/b', 'a\0b', 'a'.repeat(129)]) {
      expectError(await rejectionOf(J1.load(id)), PersistenceError, 'INVALID_SESSION_ID')
      expectError(await rejectionOf(J1.acquire(id)), PersistenceError, 'INVALID_SESSION_ID')
    }
  })

  it('lists only log files, reports damaged headers and treats a missing dir as empty', async () => {
    const missing = jsonlPersistence({ dir: join(dir, 'absent') })
    opened.push(missing)
    expect(await missing.list()).toEqual({ headers: [], damaged: [] })
    const J1 = J()
    await store(J1, [log()])
    await writeFile(file('s1.jsonl.corrupt-5'), 'junk')
    await writeFile(file('s1.jsonl.0123456789ab.tmp'), 'junk')
    await writeFile(file('s1.jsonl.idx'), 'junk')
    await writeFile(file('bad.jsonl'), '[1,2]\n')
    await writeFile(file('worse.jsonl.gz'), 'not gzip at all')
    const listing = await J1.list()
    expect(listing.headers).toEqual([H1])
    expect(listing.damaged).toHaveLength(2)
    expectError(listing.damaged[0], PersistenceCorruptionError, 'CORRUPT_HEADER', {
      line: 1,
      location: file('bad.jsonl'),
    })
    expectError(listing.damaged[1], PersistenceCorruptionError, 'CORRUPT_HEADER', {
      line: 1,
      location: file('worse.jsonl.gz'),
    })
    expectError(await rejectionOf(J1.load('worse')), PersistenceCorruptionError, 'CORRUPT_HEADER', {
      line: 1,
      offset: 0,
    })
  })

  it('reports two log files of one id as DUPLICATE_LOG', async () => {
    const J1 = J()
    await store(J1, [log()])
    await writeFile(file('s1.jsonl.gz'), await bytesOf())
    expectError(await rejectionOf(J1.load('s1')), PersistenceCorruptionError, 'DUPLICATE_LOG')
    expectError((await J1.list()).damaged[0], PersistenceCorruptionError, 'DUPLICATE_LOG')
  })

  it('rejects a dir that is a file, and bad options at construction', async () => {
    await writeFile(join(dir, 'plain-file'), 'x')
    const adapter = jsonlPersistence({ dir: join(dir, 'plain-file') })
    opened.push(adapter)
    expectError(await rejectionOf(adapter.acquire('s1')), ConfigError, 'CONFIG_INVALID', { option: 'dir' })
    expectError(await rejectionOf(adapter.list()), ConfigError, 'CONFIG_INVALID', { option: 'dir' })
    expectError(
      thrownBy(() => jsonlPersistence({ dir, compression: 'lz4' as unknown as 'gzip' })),
      ConfigError,
      'CONFIG_INVALID',
      { option: 'compression' },
    )
    expectError(
      thrownBy(() => jsonlPersistence({ dir, zstdEncoder: 5 as never })),
      ConfigError,
      'CONFIG_INVALID',
      { option: 'zstdEncoder' },
    )
  })

  it.each([
    [undefined, ''],
    [null, ''],
    ['./sessions', ''],
    [{ dir: '/tmp/x', compresion: 'gzip' }, 'compresion'],
  ])('options %o → InvalidOptionsError at %j', (options, field) => {
    expectError(
      thrownBy(() => jsonlPersistence(options as never)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      { field },
    )
  })

  it('creates a missing dir with mode 0700 on the first acquire', async () => {
    const nested = join(dir, 'a', 'b')
    const adapter = jsonlPersistence({ dir: nested })
    opened.push(adapter)
    const lease = await adapter.acquire('s1')
    expect((await stat(nested)).mode & 0o777).toBe(0o700)
    await lease.release()
  })

  it('rejects every call after close with CLOSED; close releases leases', async () => {
    const J1 = J()
    const lease = await J1.acquire('s1')
    await J1.close()
    await J1.close()
    expect(lease.signal.aborted).toBe(true)
    expect(await readdir(dir)).toEqual([])
    expectError(await rejectionOf(J1.load('s1')), PersistenceError, 'CLOSED')
    expectError(await rejectionOf(J1.acquire('s1')), PersistenceError, 'CLOSED')
  })
})

describe('jsonlPersistence: plain reads overlap the scan', () => {
  /** A file system that records reads and closes, each read answering a tick late. */
  function recordingFileSystem(trace: string[]): JsonlFileSystem {
    let reads = 0
    return {
      ...nodeFileSystem,
      read: async (handle, buffer, offset, length, position) => {
        const read = ++reads
        trace.push(`read ${read} start`)
        const result = await nodeFileSystem.read(handle, buffer, offset, length, position)
        await new Promise((resolve) => setImmediate(resolve))
        trace.push(`read ${read} end`)
        return result
      },
      close: async (handle) => {
        trace.push('close')
        await nodeFileSystem.close(handle)
      },
    }
  }

  /** Stores a two-turn log as s1 and returns its events. */
  async function storedLog(): Promise<SessionEvent[]> {
    const writer = J()
    const events = log([TS(2), SE(2, 1)])
    await writer.create(H1)
    const lease = await writer.acquire('s1')
    await writer.append('s1', events, { expectedSeq: 0, lease })
    await lease.release()
    return events
  }

  it('loads the same events in any piece size, with the next read in flight during a scan', async () => {
    const events = await storedLog()
    for (const readChunkBytes of [7, 64, 65_536]) {
      const trace: string[] = []
      const loaded = await J({ fileSystem: recordingFileSystem(trace), readChunkBytes }).load('s1')
      expect(loaded.events).toEqual(events)
      if (readChunkBytes === 7) expect(trace.slice(0, 3)).toEqual(['read 1 start', 'read 1 end', 'read 2 start'])
      expect(trace.at(-1)).toBe('close')
    }
  })

  it('a scan that fails mid-file waits for the read in flight before the file is closed', async () => {
    await storedLog()
    const text = await readFile(file(), 'utf8')
    // Damage the second line (the first event), so the scan throws while later pieces remain.
    const lines = text.split('\n')
    lines[1] = `${lines[1]?.slice(0, 10)}#`
    await writeFile(file(), lines.join('\n'))
    const trace: string[] = []
    const error = await rejectionOf(J({ fileSystem: recordingFileSystem(trace), readChunkBytes: 16 }).load('s1'))
    expect(PersistenceCorruptionError.is(error)).toBe(true)
    const closeAt = trace.indexOf('close')
    const started = trace.filter((entry) => entry.endsWith('start')).length
    const ended = trace.slice(0, closeAt).filter((entry) => entry.endsWith('end')).length
    expect(ended).toBe(started)
  })
})

describe('jsonlPersistence: failures roll back', () => {
  it('cuts a batch whose fdatasync failed back to the previous size; the retry succeeds', async () => {
    let syncs = 0
    const injected = new Error('injected fdatasync failure')
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      fdatasync: async (handle) => {
        syncs++
        if (syncs === 2) throw injected
        await nodeFileSystem.fdatasync(handle)
      },
    }
    const J1 = J({ fileSystem })
    const events = log([TS(2), SE(2, 1)])
    await J1.create(H1)
    const lease = await J1.acquire('s1')
    await J1.append('s1', events.slice(0, 6), { expectedSeq: 0, lease })
    await J1.append('s1', events.slice(6, 7), { expectedSeq: 6, lease })
    const size = (await stat(file())).size
    expect(await rejectionOf(J1.append('s1', events.slice(7), { expectedSeq: 7, lease }))).toBe(injected)
    expect((await stat(file())).size).toBe(size)
    await J1.append('s1', events.slice(7), { expectedSeq: 7, lease })
    await lease.release()
    expect((await J1.load('s1')).events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })

  it('reports a failed rollback as ROLLBACK_FAILED until a load re-scans the file', async () => {
    let failing = false
    const writeError = new Error('injected write failure')
    const truncateError = new Error('injected ftruncate failure')
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      write: async (handle, buffer, offset, length, position) => {
        if (failing) {
          await nodeFileSystem.write(handle, buffer, offset, Math.min(length, 5), position)
          throw writeError
        }
        return nodeFileSystem.write(handle, buffer, offset, length, position)
      },
      ftruncate: async (handle, length) => {
        if (failing) throw truncateError
        await nodeFileSystem.ftruncate(handle, length)
      },
    }
    const J1 = J({ fileSystem })
    const events = log([TS(2)])
    await J1.create(H1)
    const lease = await J1.acquire('s1')
    await J1.append('s1', events.slice(0, 6), { expectedSeq: 0, lease })
    failing = true
    const error = expectError(
      await rejectionOf(J1.append('s1', events.slice(6), { expectedSeq: 6, lease })),
      PersistenceError,
      'ROLLBACK_FAILED',
    )
    expect(error.errors).toEqual([writeError, truncateError])
    failing = false
    expect(await rejectionOf(J1.append('s1', events.slice(6), { expectedSeq: 6, lease }))).toBe(error)
    const loaded = await J1.load('s1')
    expect(loaded.torn).toMatchObject({ kind: 'torn', defect: 'unterminated', line: 8 })
    await J1.commitRepair('s1', loaded.torn, [])
    await J1.append('s1', events.slice(6), { expectedSeq: 6, lease })
    await lease.release()
    expect((await J1.load('s1')).events.map(json)).toEqual(events.map(json))
  })

  it('refuses to append over a torn tail it has not loaded (REPAIR_REQUIRED)', async () => {
    const content = await writeLog(`${log().map(lineOf).join('')}{"type":"turn/sta`)
    const J1 = J()
    const lease = await J1.acquire('s1')
    expectError(
      await rejectionOf(J1.append('s1', log([TS(2)]).slice(6), { expectedSeq: 6, lease })),
      PersistenceError,
      'REPAIR_REQUIRED',
    )
    expect(await textOf()).toBe(content)
    await lease.release()
  })

  it('rejects an append when the file changed size behind its back (expectedBytes)', async () => {
    const J1 = J()
    const events = log([TS(2)])
    await J1.create(H1)
    const lease = await J1.acquire('s1')
    await J1.append('s1', events.slice(0, 6), { expectedSeq: 0, lease })
    const size = (await stat(file())).size
    await writeFile(file(), `${await textOf()}\n`)
    expectError(
      await rejectionOf(J1.append('s1', events.slice(6), { expectedSeq: 6, lease })),
      SeqConflictError,
      'SEQ_CONFLICT',
      {
        expectedBytes: size,
        actualBytes: size + 1,
      },
    )
    await lease.release()
  })
})

describe('jsonlPersistence: tails, corruption and repair', () => {
  const eight = (): SessionEvent[] => log([TS(2), SS(2, 1)])

  it('loads a torn last line, repairs it to the committed prefix plus closers', async () => {
    const committed = `${headerLine}\n${eight().map(lineOf).join('')}`
    await writeLog(`${eight().map(lineOf).join('')}{"type":"assistant/chunk","seq":8,"ti`)
    const J1 = J()
    const { first, closers, second } = await loadAndRepair(J1)
    expect(first.torn).toMatchObject({ kind: 'torn', defect: 'unterminated', line: 10, recovered: [] })
    expect(closers.map((event) => [event.seq, event.type])).toEqual([
      [8, 'step/end'],
      [9, 'turn/end'],
    ])
    expect(second.torn).toBeUndefined()
    expect(second.events.map(json)).toEqual([...eight(), ...closers].map(json))
    expect(await textOf()).toBe(committed + closers.map(lineOf).join(''))
    expect(second.revision).not.toBe(first.revision)
    const lease = await J1.acquire('s1')
    await J1.commitRepair('s1', undefined, interruptedTurnClosers(second.events))
    await lease.release()
    expect((await J1.load('s1')).revision).toBe(second.revision)
  })

  it('keeps the truncated prefix when the closers write fails after the cut', async () => {
    const committed = `${headerLine}\n${eight().map(lineOf).join('')}`
    await writeLog(`${eight().map(lineOf).join('')}{"type":"assistant/chunk","seq":8,"ti`)
    const injected = new Error('injected write failure')
    let failWrites = false
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      write: async (handle, buffer, offset, length, position) => {
        if (failWrites) throw injected
        return nodeFileSystem.write(handle, buffer, offset, length, position)
      },
    }
    const J1 = J({ fileSystem })
    const lease = await J1.acquire('s1')
    const first = await J1.load('s1')
    const closers = interruptedTurnClosers(first.events)
    failWrites = true
    expect(await rejectionOf(J1.commitRepair('s1', first.torn, closers))).toBe(injected)
    failWrites = false
    expect(await textOf()).toBe(committed)
    const again = await J1.load('s1')
    expect(again.torn).toBeUndefined()
    expect(again.events.map(json)).toEqual(eight().map(json))
    expect(interruptedTurnClosers(again.events).map(json)).toEqual(closers.map(json))
    await lease.release()
  })

  it('tolerates an unparsable last line as a torn tail and cuts it', async () => {
    await writeLog(`${log().map(lineOf).join('')}{"type":"turn/sta\n`)
    const J1 = J()
    const { first, closers, second } = await loadAndRepair(J1)
    expect(first.events.map(json)).toEqual(log().map(json))
    expect(first.torn).toMatchObject({ kind: 'torn', defect: 'unparsable', line: 8 })
    expect(closers).toEqual([])
    expect(second.torn).toBeUndefined()
    expect(await textOf()).toBe(`${headerLine}\n${log().map(lineOf).join('')}`)
  })

  it('refuses damage followed by valid records and changes nothing', async () => {
    const body = log().map(lineOf).join('')
    const content = await writeLog(`${body}xx\n${lineOf(log([TS(2)])[6])}`)
    const before = await stat(file())
    const J1 = J()
    expectError(await rejectionOf(J1.load('s1')), PersistenceCorruptionError, 'CORRUPT_LOG', {
      line: 8,
      offset: Buffer.byteLength(`${headerLine}\n${body}`),
      defect: 'unparsable',
      location: file(),
    })
    expect(await textOf()).toBe(content)
    expect((await stat(file())).mtimeMs).toBe(before.mtimeMs)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  it('reports a complete record with a wrong seq as SEQ_MISMATCH', async () => {
    const wrong = { ...log([TS(2)])[6]!, seq: 9 }
    const content = await writeLog(`${log().map(lineOf).join('')}${lineOf(wrong)}`)
    expectError(await rejectionOf(J().load('s1')), PersistenceCorruptionError, 'SEQ_MISMATCH', {
      line: 8,
      expected: 6,
      actual: 9,
    })
    expect(await textOf()).toBe(content)
  })

  it('quarantines a damaged log with truncateAtCorruption and keeps the valid prefix', async () => {
    const body = log().map(lineOf).join('')
    const damaged = await writeLog(`${body}xx\n${lineOf(log([TS(2)])[6])}`)
    let clock = 4242
    const J1 = J({ now: () => clock })
    const lease = await J1.acquire('s1')
    const loaded = await J1.load('s1', { truncateAtCorruption: true })
    expect(loaded.torn).toMatchObject({ kind: 'corrupt', defect: 'unparsable', line: 8 })
    expect(loaded.events.map(json)).toEqual(log().map(json))
    clock = 5000
    await J1.commitRepair('s1', loaded.torn, interruptedTurnClosers(loaded.events))
    await lease.release()
    expect(await textOf('s1.jsonl.corrupt-5000')).toBe(damaged)
    expect(await textOf()).toBe(`${headerLine}\n${body}`)
    const again = await J1.load('s1')
    expect(again.torn).toBeUndefined()
    expect(again.events.map(json)).toEqual(log().map(json))
    expect((await J1.list()).headers).toEqual([H1])
  })

  it('refuses a repair whose tail revision is stale, changing nothing', async () => {
    await writeLog(`${log().map(lineOf).join('')}{"type":"turn/sta`)
    const J1 = J()
    const lease = await J1.acquire('s1')
    const loaded = await J1.load('s1')
    const changed = `${await textOf()}r`
    await writeFile(file(), changed)
    expectError(await rejectionOf(J1.commitRepair('s1', loaded.torn, [])), SeqConflictError, 'SEQ_CONFLICT', {
      expectedRevision: loaded.torn?.revision,
    })
    expect(await textOf()).toBe(changed)
    await lease.release()
    expectError(await rejectionOf(J1.commitRepair('s1', loaded.torn, [])), LeaseLostError, 'LEASE_LOST')
  })
})

describe('jsonlPersistence: locks', () => {
  it('excludes a second instance until release', async () => {
    const A = J()
    const B = J()
    const lease = await A.acquire('s1')
    expect(lease.epoch).toBe(1)
    const error = expectError(await rejectionOf(B.acquire('s1')), SessionLockedError, 'SESSION_LOCKED', {
      location: file('s1.lock'),
    })
    expect(error.holder).toMatchObject({ pid: process.pid, host: hostname() })
    expectError(await rejectionOf(A.acquire('s1')), SessionLockedError, 'SESSION_LOCKED')
    await lease.release()
    await lease.release()
    const second = await B.acquire('s1')
    await second.release()
  })

  it('takes over a stale lock of an exited process on this host', async () => {
    const child = spawn(process.execPath, ['-e', ''])
    const pid = child.pid!
    await new Promise((resolve) => child.once('exit', resolve))
    await writeFile(file('s1.lock'), JSON.stringify({ pid, host: hostname(), token: 'f'.repeat(32), acquiredAt: 7 }))
    const lease = await J().acquire('s1')
    expect(lease.tookOver).toEqual({ pid, host: hostname(), acquiredAt: 7 })
    expect(JSON.parse(await textOf('s1.lock')).token).toBe(lease.token)
    expect(await readdir(dir)).toEqual(['s1.lock'])
    await lease.release()
    expect(await readdir(dir)).toEqual([])
  })

  it('treats an unreadable lock or a live holder elsewhere as held', async () => {
    await writeFile(file('s1.lock'), 'not json')
    const error = expectError(await rejectionOf(J().acquire('s1')), SessionLockedError, 'SESSION_LOCKED')
    expect(error.holder).toBeUndefined()
    // A lock is read with one read of 4 KiB; a longer file is nothing this adapter wrote.
    await writeFile(
      file('s1.lock'),
      JSON.stringify({ pid: 1, host: hostname(), token: 'a'.repeat(32), acquiredAt: 1, pad: 'x'.repeat(5000) }),
    )
    expect(((await rejectionOf(J().acquire('s1'))) as SessionLockedError).holder).toBeUndefined()
    // A live holder elsewhere: its heartbeat is fresh.
    const fresh = Date.now()
    await writeFile(
      file('s1.lock'),
      JSON.stringify({ pid: 1, host: 'elsewhere.example', token: 'a'.repeat(32), acquiredAt: fresh }),
    )
    expect(((await rejectionOf(J().acquire('s1'))) as SessionLockedError).holder).toEqual({
      pid: 1,
      host: 'elsewhere.example',
      acquiredAt: fresh,
    })
  })

  it('takes over an expired lock of another host (an older version lock without a heartbeat ages from acquiredAt)', async () => {
    await writeFile(
      file('s1.lock'),
      JSON.stringify({ pid: 1, host: 'elsewhere.example', token: 'a'.repeat(32), acquiredAt: 1 }),
    )
    const lease = await J().acquire('s1')
    expect(lease.tookOver).toEqual({ pid: 1, host: 'elsewhere.example', acquiredAt: 1 })
    expect(lease.epoch).toBe(2)
    const lock = JSON.parse(await textOf('s1.lock'))
    expect(lock).toMatchObject({ token: lease.token, owner: lease.owner, epoch: 2, pid: process.pid })
    await lease.release()
  })

  it('fences a writer whose lock was replaced', async () => {
    const A = J()
    await store(A, [log()])
    const lease = await A.acquire('s1')
    await rm(file('s1.lock'))
    const other = await J().acquire('s1')
    const size = (await stat(file())).size
    const error = expectError(
      await rejectionOf(A.append('s1', log([TS(2)]).slice(6), { expectedSeq: 6, lease })),
      LeaseLostError,
      'LEASE_LOST',
    )
    expect((await stat(file())).size).toBe(size)
    expect(lease.signal.aborted).toBe(true)
    expect(lease.signal.reason).toBe(error)
    await lease.release()
    expect(await readdir(dir)).toContain('s1.lock')
    await other.release()
  })

  it('keeps leases in the instance with lock: false', async () => {
    const A = J({ lock: false })
    const lease = await A.acquire('s1')
    expectError(await rejectionOf(A.acquire('s1')), SessionLockedError, 'SESSION_LOCKED')
    await store(J({ lock: false }), [log()])
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    await lease.release()
  })
})

describe('jsonlPersistence: compressed frames', () => {
  beforeAll(async () => {
    await wasmZstd.isLoaded
  })
  const zstdEncoder = (bytes: Uint8Array, level: number): Uint8Array => new Uint8Array(wasmZstd.compress(bytes, level))

  it('writes one gzip member per batch, readable by gunzip', async () => {
    const J1 = J({ compression: 'gzip' })
    const events = log([TS(2)])
    await store(J1, [events.slice(0, 6), events.slice(6)])
    const bytes = await bytesOf('s1.jsonl.gz')
    let members = 0
    for (let at = 0; at + 2 < bytes.length; at++)
      if (bytes[at] === 0x1f && bytes[at + 1] === 0x8b && bytes[at + 2] === 8) members++
    expect(members).toBe(3)
    const expected = `${headerLine}\n${events.map(lineOf).join('')}`
    const gunzip = spawnSync('gunzip', ['-c', file('s1.jsonl.gz')], { encoding: 'utf8' })
    if (gunzip.error === undefined) expect(gunzip.stdout).toBe(expected)
    const loaded = await J1.load('s1')
    expect(loaded.events.map(json)).toEqual(events.map(json))
    expect((await J1.list()).headers).toEqual([H1])
  })

  it('needs a zstd encoder on Node 20, yet reads zstd logs without one', async () => {
    const native = typeof ((await import('node:zlib')) as Record<string, unknown>)['zstdCompressSync'] === 'function'
    if (!native) {
      expectError(
        thrownBy(() => jsonlPersistence({ dir, compression: 'zstd' })),
        ConfigError,
        'ZSTD_UNAVAILABLE',
        { option: 'compression' },
      )
    }
    const events = log([TS(2)])
    await store(J({ compression: 'zstd', zstdEncoder }), [events.slice(0, 6)])
    const before = await bytesOf('s1.jsonl.zst')
    const reader = J()
    const loaded = await reader.load('s1')
    expect(loaded.events.map(json)).toEqual(events.slice(0, 6).map(json))
    expect((await reader.list()).headers).toEqual([H1])
    if (native) return
    const lease = await reader.acquire('s1')
    expectError(
      await rejectionOf(reader.append('s1', events.slice(6), { expectedSeq: 6, lease })),
      ConfigError,
      'ZSTD_UNAVAILABLE',
    )
    await lease.release()
    expect(await bytesOf('s1.jsonl.zst')).toEqual(before)
  })

  it.each(['gzip', 'zstd'] as const)(
    'salvages the complete records of a torn last %s frame and rewrites it as one frame',
    async (compression) => {
      const big = randomBytes(225_000).toString('base64')
      const events = log([TS(2), SS(2, 1), CH(big, 2, 1)])
      const J1 = J({ compression, zstdEncoder })
      await store(J1, [events.slice(0, 6), events.slice(6)])
      const name = `s1.jsonl${compression === 'gzip' ? '.gz' : '.zst'}`
      const full = await bytesOf(name)
      const walkOf = (bytes: Uint8Array) => (compression === 'gzip' ? gzipWalk(bytes) : zstdWalk(bytes))
      const frames = walkOf(full).frames
      expect(frames).toHaveLength(3)
      const third = frames[2]!
      await writeFile(file(name), full.subarray(0, third.offset + Math.floor(third.length / 2)))
      const inode = (await stat(file(name))).ino
      const { first, closers, second } = await loadAndRepair(J1)
      expect(first.torn?.recovered.map((event) => event.seq)).toEqual([6, 7])
      expect(first.events.map(json)).toEqual(events.slice(0, 8).map(json))
      expect(closers.map((event) => event.type)).toEqual(['step/end', 'turn/end'])
      expect(second.torn).toBeUndefined()
      expect(second.events.map(json)).toEqual([...events.slice(0, 8), ...closers].map(json))
      const repaired = await bytesOf(name)
      expect((await stat(file(name))).ino).not.toBe(inode)
      expect(repaired.subarray(0, third.offset)).toEqual(full.subarray(0, third.offset))
      expect(walkOf(repaired).frames).toHaveLength(3)
      expect((await readdir(dir)).filter((entry) => entry.endsWith('.tmp'))).toEqual([])
    },
  )

  it.each(['gzip', 'zstd'] as const)(
    'names the file byte of the damaged %s frame, not of the decoded text, in CORRUPT_LOG and SEQ_MISMATCH',
    async (compression) => {
      const codec = compression === 'gzip' ? gzipCodec() : zstdCodec({ zstdEncoder })
      const name = `s1.jsonl${compression === 'gzip' ? '.gz' : '.zst'}`
      const events = log([TS(2)])
      await store(J({ compression, zstdEncoder }), [events.slice(0, 6)])
      const stored = await bytesOf(name)
      const damage = async (text: string): Promise<void> => {
        await writeFile(file(name), Buffer.concat([stored, await codec.encode(new TextEncoder().encode(text))]))
      }
      const reader = J()
      await damage(`xx\n${lineOf(events[6])}`)
      expectError(await rejectionOf(reader.load('s1')), PersistenceCorruptionError, 'CORRUPT_LOG', {
        line: 8,
        offset: stored.length,
        defect: 'unparsable',
        location: file(name),
      })
      expect((await reader.load('s1', { truncateAtCorruption: true })).torn).toMatchObject({
        kind: 'corrupt',
        line: 8,
        offset: stored.length,
      })
      await damage(lineOf({ ...events[6]!, seq: 9 }))
      expectError(await rejectionOf(reader.load('s1')), PersistenceCorruptionError, 'SEQ_MISMATCH', {
        line: 8,
        offset: stored.length,
        expected: 6,
        actual: 9,
        location: file(name),
      })
    },
  )
})

function gzipWalk(bytes: Uint8Array) {
  return gzipCodec().walk(bytes)
}

function zstdWalk(bytes: Uint8Array) {
  return zstdCodec({ onUnavailable: 'reject-writes' }).walk(bytes)
}

describe('jsonlPersistence: a cut at every byte offset loads and repairs', () => {
  beforeAll(async () => {
    await wasmZstd.isLoaded
  })
  const zstdEncoder = (bytes: Uint8Array, level: number): Uint8Array => new Uint8Array(wasmZstd.compress(bytes, level))
  const fixture = (): SessionEvent[] =>
    log([TS(2), SS(2, 1), UM('ü😀'), CH('a', 2, 1), CH('b', 2, 1), CH('c', 2, 1), CH('d', 2, 1)])

  it.each(['none', 'gzip', 'zstd'] as const)(
    '%s',
    async (compression) => {
      const events = fixture()
      const writer = J({ compression, zstdEncoder })
      await store(writer, [events.slice(0, 6), events.slice(6)])
      const name = `s1${{ none: '.jsonl', gzip: '.jsonl.gz', zstd: '.jsonl.zst' }[compression]}`
      const full = await bytesOf(name)
      // Where each unit (line or frame) ends, and how many events are complete there.
      const ends: { end: number; count: number }[] = []
      if (compression === 'none') {
        let count = 0
        let at = full.indexOf(0x0a) + 1
        ends.push({ end: at, count })
        for (const line of full.subarray(at).toString('utf8').split('\n').slice(0, -1)) {
          at += Buffer.byteLength(line) + 1
          const record = JSON.parse(line) as { values?: unknown[] }
          count += record.values === undefined ? 1 : record.values.length
          ends.push({ end: at, count })
        }
        expect(ends).toHaveLength(11)
      } else {
        const frames = (compression === 'gzip' ? gzipWalk(full) : zstdWalk(full)).frames
        expect(frames).toHaveLength(3)
        frames.forEach((frame, index) => {
          ends.push({ end: frame.offset + frame.length, count: [0, 6, 13][index]! })
        })
      }
      const adapter = J({ zstdEncoder })
      const lease = await adapter.acquire('s1')
      for (let cut = ends[0]!.end; cut <= full.length; cut++) {
        await writeFile(file(name), full.subarray(0, cut))
        const complete = ends.filter((unit) => unit.end <= cut).at(-1)!
        const context = `cut ${cut} of ${full.length}`
        const first = await adapter.load('s1')
        expect(first.torn === undefined, context).toBe(complete.end === cut)
        if (compression === 'none') expect(first.events.length, context).toBe(complete.count)
        else expect(first.events.length, context).toBeGreaterThanOrEqual(complete.count)
        expect(first.events.map(json), context).toEqual(events.slice(0, first.events.length).map(json))
        const closers = interruptedTurnClosers(first.events)
        await adapter.commitRepair('s1', first.torn, closers)
        const second = await adapter.load('s1')
        expect(second.torn, context).toBeUndefined()
        expect(second.events.map(json), context).toEqual([...first.events, ...closers].map(json))
        const repaired = await bytesOf(name)
        await adapter.commitRepair('s1', second.torn, interruptedTurnClosers(second.events))
        expect((await bytesOf(name)).equals(repaired), context).toBe(true)
      }
      await lease.release()
      expect((await readdir(dir)).sort()).toEqual([name])
      // Two commits with fsync per cut: with another test file running beside it this takes ~20 s.
    },
    120_000,
  )
})

describe('jsonlPersistence: loaded events are adopted, not copied', () => {
  it('returns fresh mutable objects from the adapter, and frozen shared ones through the coordinator', async () => {
    await store(J(), [log()])
    const raw = await J().load('s1')
    expect(Object.isFrozen(raw.events) || Object.isFrozen(raw.events[0])).toBe(false)
    ;(raw.events[0] as { type: string }).type = 'mutated'
    const harness = await freshHarness({ persistence: J() })
    const loaded = await harness.persistence.load('s1')
    expect(loaded.events.map(json)).toEqual(log().map(json))
    expect(Object.isFrozen(loaded.events)).toBe(true)
    for (const event of loaded.events)
      expect([Object.isFrozen(event), Object.isFrozen(event.data)]).toEqual([true, true])
    const message = loaded.events[2]?.data as { content: { text: string }[] }
    expect(Object.isFrozen(message.content[0])).toBe(true)
    const seeded = createSession({ id: 's1', seed: loaded.events })
    expect(seeded.events.slice(0, 6).every((event, index) => event.data === loaded.events[index]?.data)).toBe(true)
    expect(seeded.events.map(json).slice(0, 6)).toEqual(log().map(json))
    // A list nobody marked (a caller's own) is copied as before.
    const copied = createSession({ id: 's1', seed: log() })
    expect(copied.events[0]?.data).not.toBe(log()[0]?.data)
    await harness.close()
  })

  it.each([
    ['an overflowing number', '1e999', 'non-finite number'],
    ['negative zero', '-0', 'negative zero'],
  ])('does not adopt a log with %s, and the read gates reject it with its seq', async (_label, literal, reason) => {
    await writeLog(
      `${log().map(lineOf).join('')}{"type":"x/note","seq":6,"time":1000,"data":{"n":${literal}},"ignorable":true}\n`,
    )
    const harness = await freshHarness({ persistence: J() })
    const error = expectError(
      await rejectionOf(harness.persistence.load('s1')),
      PersistenceCorruptionError,
      'INVALID_EVENT',
      { seq: 6 },
    )
    expect(error.cause).toMatchObject({ code: 'NOT_JSON', reason, index: 6 })
    await harness.close()
  })
})

describe('jsonlPersistence under a harness', () => {
  const eight = (): SessionEvent[] => log([TS(2), SS(2, 1)])

  it('leaves dir empty for a session disposed without appends, and frees its id', async () => {
    const harness = await freshHarness({ persistence: J() })
    const sessions = harness.ctx.sessions
    await sessions.dispose(sessions.create({ id: 's1' }))
    expect(await readdir(dir)).toEqual([])
    await sessions.dispose(sessions.create({ id: 's1' }))
    expect(await readdir(dir)).toEqual([])
    await harness.close()
  })

  it('repairs a torn log on load and resumes it with session/end-seed', async () => {
    const committed = `${headerLine}\n${eight().map(lineOf).join('')}`
    await writeLog(`${eight().map(lineOf).join('')}{"type":"assistant/chunk","seq":8,"ti`)
    const harness = await freshHarness({ persistence: J() })
    const loaded = await harness.persistence.load('s1')
    expect(loaded.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    const closers = loaded.events.slice(8)
    expect(await textOf()).toBe(committed + closers.map(lineOf).join(''))
    const prepared = await harness.persistence.prepare('s1')
    harness.ctx.sessions.create({ id: 's1', seed: prepared.events, header: prepared.header })
    await harness.close()
    const stored = await J().load('s1')
    expect(stored.torn).toBeUndefined()
    expect(stored.events.map((event) => event.type).slice(8)).toEqual(['step/end', 'turn/end', 'session/end-seed'])
    expect(stored.events.at(-1)?.seq).toBe(10)
  })

  it('resumes a log whose lines list the envelope keys in another order, sharing the loaded data', async () => {
    const reordered = (event: SessionEvent): string => {
      const { type, seq, time, data, ...rest } = event
      return `${JSON.stringify({ data, ...rest, time, seq, type })}\n`
    }
    await writeLog(log().map(reordered).join(''))
    const harness = await freshHarness({ persistence: J() })
    const prepared = await harness.persistence.prepare('s1')
    const session = harness.ctx.sessions.create({ id: 's1', seed: prepared.events, header: prepared.header })
    expect(session.events.slice(0, 6).map(json)).toEqual(log().map(json))
    expect(session.events.slice(0, 6).every((event, index) => event.data === prepared.events[index]?.data)).toBe(true)
    session.append('turn/start', { turn: 2 }, {})
    await harness.ctx.sessions.flush(session)
    await harness.close()
    expect((await J().load('s1')).events.map((event) => event.type).slice(6)).toEqual([
      'session/end-seed',
      'turn/start',
    ])
  })

  it('cuts an unparsable last line and leaves no lock behind a refused load', async () => {
    await writeLog(`${log().map(lineOf).join('')}{"type":"turn/sta\n`)
    const harness = await freshHarness({ persistence: J() })
    expect((await harness.persistence.load('s1')).events.map(json)).toEqual(log().map(json))
    expect(await textOf()).toBe(`${headerLine}\n${log().map(lineOf).join('')}`)
    await writeLog(`${log().map(lineOf).join('')}xx\n${lineOf(log([TS(2)])[6])}`)
    expectError(await rejectionOf(harness.persistence.load('s1')), PersistenceCorruptionError, 'CORRUPT_LOG', {
      line: 8,
    })
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    await harness.close()
  })

  it('quarantines on repair with truncateAtCorruption, then has nothing to do', async () => {
    const damaged = await writeLog(`${log().map(lineOf).join('')}xx\n${lineOf(log([TS(2)])[6])}`)
    const harness = await freshHarness({ persistence: J({ now: () => 777 }) })
    const report = await harness.persistence.repair('s1', { truncateAtCorruption: true })
    expect(report).toMatchObject({
      action: 'quarantined',
      keptEvents: 6,
      closers: [],
      quarantine: join(dir, 's1.jsonl.corrupt-777'),
    })
    expect(await textOf('s1.jsonl.corrupt-777')).toBe(damaged)
    expect(await textOf()).toBe(`${headerLine}\n${log().map(lineOf).join('')}`)
    expect((await harness.persistence.load('s1')).events.map(json)).toEqual(log().map(json))
    expect(await harness.persistence.repair('s1')).toMatchObject({ action: 'none' })
    await harness.close()
  })
})

describe('jsonlPersistence: scenarios checked to the letter', () => {
  beforeAll(async () => {
    await wasmZstd.isLoaded
  })
  const zstdEncoder = (bytes: Uint8Array, level: number): Uint8Array => new Uint8Array(wasmZstd.compress(bytes, level))
  const nativeZstd = async (): Promise<boolean> =>
    typeof ((await import('node:zlib')) as Record<string, unknown>)['zstdCompressSync'] === 'function'

  it('salvages seqs 6, 7 of a zstd frame cut 10 bytes past its first block, and renames one frame of seqs 6–9 over the log', async () => {
    const big = randomBytes(225_000).toString('base64')
    expect(big).toHaveLength(300_000)
    const events = log([TS(2), SS(2, 1), CH(big, 2, 1)])
    await store(J({ compression: 'zstd', zstdEncoder }), [events.slice(0, 6), events.slice(6)])
    const name = 's1.jsonl.zst'
    const full = await bytesOf(name)
    const frames = zstdWalk(full).frames
    expect(frames).toHaveLength(3)
    const third = frames[2]!
    const layout = readZstdFrameLayout(full, third.offset)
    if (layout.kind !== 'frame') throw new Error('frame 3 does not parse')
    expect(layout.blockEnds.length).toBeGreaterThan(1)
    const cut = third.offset + layout.blockEnds[0]! + 10
    await writeFile(file(name), full.subarray(0, cut))
    const inode = (await stat(file(name))).ino
    const harness = await freshHarness({ persistence: J({ zstdEncoder }) })
    const loaded = await harness.persistence.load('s1')
    await harness.close()
    expect(loaded.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(loaded.events.slice(0, 8).map(json)).toEqual(events.slice(0, 8).map(json))
    expect(loaded.events[8]).toMatchObject({ type: 'step/end', data: { turn: 2, step: 1, meta: { synthetic: true } } })
    expect(loaded.events[9]).toMatchObject({
      type: 'turn/end',
      data: { turn: 2, reason: { kind: 'interrupted' }, meta: { synthetic: true } },
    })
    expect((await stat(file(name))).ino).not.toBe(inode)
    const repaired = await bytesOf(name)
    expect(repaired.subarray(0, third.offset).equals(full.subarray(0, third.offset))).toBe(true)
    const after = zstdWalk(repaired)
    expect(after.defect).toBeUndefined()
    expect(after.frames).toHaveLength(3)
    expect(after.frames[2]!.offset).toBe(third.offset)
    expect(new TextDecoder().decode(after.frames[2]!.decoded)).toBe(loaded.events.slice(6).map(lineOf).join(''))
    expect((await readdir(dir)).filter((entry) => entry.endsWith('.tmp'))).toEqual([])
    const next = await J().load('s1')
    expect(next.torn).toBeUndefined()
    expect(next.events.map(json)).toEqual(loaded.events.map(json))
  })

  it('a resumed .jsonl.zst without a zstd writer: load and list work, the first flush rejects with cause ZSTD_UNAVAILABLE, file unchanged', async () => {
    if (await nativeZstd()) return
    expectError(
      thrownBy(() => jsonlPersistence({ dir, compression: 'zstd' })),
      ConfigError,
      'ZSTD_UNAVAILABLE',
      { option: 'compression' },
    )
    await store(J({ compression: 'zstd', zstdEncoder }), [log()])
    const before = await bytesOf('s1.jsonl.zst')
    const harness = await freshHarness({ persistence: J() })
    expect((await harness.persistence.load('s1')).events.map(json)).toEqual(log().map(json))
    expect(await harness.persistence.list()).toEqual([H1])
    const prepared = await harness.persistence.prepare('s1')
    const session = harness.ctx.sessions.create({ id: 's1', seed: prepared.events, header: prepared.header })
    session.append('turn/start', { turn: 2 }, {})
    const rejected = await rejectionOf(harness.ctx.sessions.flush(session))
    expect(rejected).toMatchObject({ code: 'FLUSH_FAILED' })
    expectError((rejected as { cause?: unknown }).cause, ConfigError, 'ZSTD_UNAVAILABLE')
    expect((await bytesOf('s1.jsonl.zst')).equals(before)).toBe(true)
    await rejectionOf(harness.close())
    expect((await bytesOf('s1.jsonl.zst')).equals(before)).toBe(true)
  })

  it.each(['none', 'gzip', 'zstd'] as const)(
    'the torn-tail fixture loads identically with readChunkBytes 1, 2, 3, 5 and 65 536 (%s)',
    async (compression) => {
      const events = log([TS(2), SS(2, 1), UM('ü😀'), CH('a', 2, 1), CH('b', 2, 1), CH('c', 2, 1), CH('d', 2, 1)])
      await store(J({ compression, zstdEncoder }), [events.slice(0, 6), events.slice(6)])
      for (const readChunkBytes of [1, 2, 3, 5, 65_536]) {
        const loaded = await J({ readChunkBytes }).load('s1')
        expect(loaded.events.map(json), `readChunkBytes ${readChunkBytes}`).toEqual(events.map(json))
        expect(loaded.torn).toBeUndefined()
      }
    },
  )

  it('writes each batch with one logical write and one fdatasync; 150 000 events in one append are 1 write, 1 sync', async () => {
    const counts = { write: 0, fdatasync: 0, fsync: 0 }
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      write: async (handle, buffer, offset, length, position) => {
        counts.write++
        return nodeFileSystem.write(handle, buffer, offset, length, position)
      },
      fdatasync: async (handle) => {
        counts.fdatasync++
        await nodeFileSystem.fdatasync(handle)
      },
      fsync: async (handle) => {
        counts.fsync++
        await nodeFileSystem.fsync(handle)
      },
    }
    const J1 = J({ fileSystem })
    await J1.create(H1)
    const lease = await J1.acquire('s1')
    await J1.append('s1', log(), { expectedSeq: 0, lease })
    const small = log([TS(2), SS(2, 1)]).slice(6)
    counts.write = 0
    counts.fdatasync = 0
    counts.fsync = 0
    await J1.append('s1', small, { expectedSeq: 6, lease })
    expect(counts).toEqual({ write: 1, fdatasync: 1, fsync: 0 })
    const batch: SessionEvent[] = []
    for (let index = 0; index < 150_000; index++) {
      const seq = 8 + index
      batch.push({ type: 'test/note', seq, time: 1000, data: { index } })
    }
    counts.write = 0
    counts.fdatasync = 0
    await J1.append('s1', batch, { expectedSeq: 8, lease })
    expect(counts).toEqual({ write: 1, fdatasync: 1, fsync: 0 })
    await lease.release()
    const loaded = await J().load('s1')
    expect(loaded.events).toHaveLength(150_008)
    expect(json(loaded.events.at(-1))).toBe(json(batch.at(-1)))
  }, 60_000)

  it.each(['gzip', 'zstd'] as const)(
    'a %s salvage repair failing before its rename leaves the original; the next load salvages the same records',
    async (compression) => {
      const big = randomBytes(225_000).toString('base64')
      const events = log([TS(2), SS(2, 1), CH(big, 2, 1)])
      await store(J({ compression, zstdEncoder }), [events.slice(0, 6), events.slice(6)])
      const name = `s1.jsonl${compression === 'gzip' ? '.gz' : '.zst'}`
      const full = await bytesOf(name)
      const third = (compression === 'gzip' ? gzipWalk(full) : zstdWalk(full)).frames[2]!
      const torn = full.subarray(0, third.offset + Math.floor(third.length / 2))
      await writeFile(file(name), torn)
      let crash = true
      const fileSystem: JsonlFileSystem = {
        ...nodeFileSystem,
        rename: async (from, to) => {
          if (crash && to === file(name)) {
            crash = false
            throw new Error('crash before the rename')
          }
          return nodeFileSystem.rename(from, to)
        },
      }
      const J1 = J({ fileSystem, zstdEncoder })
      const lease = await J1.acquire('s1')
      const first = await J1.load('s1')
      expect(first.torn?.recovered.map((event) => event.seq)).toEqual([6, 7])
      const closers = interruptedTurnClosers(first.events)
      await rejectionOf(J1.commitRepair('s1', first.torn, closers))
      expect((await bytesOf(name)).equals(torn)).toBe(true)
      // What a real crash leaves: a temp file, ignored by load and list.
      await writeFile(file(`${name}.0123456789ab.tmp`), full)
      const again = await J1.load('s1')
      expect(again.events.map(json)).toEqual(first.events.map(json))
      expect(again.torn?.recovered.map(json)).toEqual(first.torn?.recovered.map(json))
      expect((await J1.list()).headers).toEqual([H1])
      await J1.commitRepair('s1', again.torn, closers)
      await lease.release()
      const repaired = await J().load('s1')
      expect(repaired.torn).toBeUndefined()
      expect(repaired.events.map(json)).toEqual([...first.events, ...closers].map(json))
    },
  )

  it('never overwrites a log another instance published first: the second first-append is SESSION_EXISTS', async () => {
    const A = J({ lock: false })
    const B = J({ lock: false })
    await A.create(H1)
    await B.create({ ...H1, cwd: '/other' })
    const leaseA = await A.acquire('s1')
    const leaseB = await B.acquire('s1')
    await A.append('s1', log(), { expectedSeq: 0, lease: leaseA })
    const published = await bytesOf()
    expectError(
      await rejectionOf(B.append('s1', logOf([TS(1)]), { expectedSeq: 0, lease: leaseB })),
      PersistenceError,
      'SESSION_EXISTS',
      {
        sessionId: 's1',
      },
    )
    expect((await bytesOf()).equals(published)).toBe(true)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    await leaseA.release()
    await leaseB.release()
    expect((await J().load('s1')).header).toEqual(H1)
  })
})
