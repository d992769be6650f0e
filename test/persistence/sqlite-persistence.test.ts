/**
 * What the conformance suite does not cover for `sqlitePersistence`: its options, a schema from a
 * newer Yoke, the idempotent re-append, real processes racing for one id, large events, ids and
 * text, an injected database, a busy database, damaged headers, lease inspection and a harness
 * end to end.
 */
import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { createHarness } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { ErrorCode } from '../../src/errors/codes.js'
import { InvalidOptionsError } from '../../src/errors/invalid-options-error.js'
import { LeaseLostError } from '../../src/errors/lease-lost-error.js'
import { PersistenceCorruptionError } from '../../src/errors/persistence-corruption-error.js'
import { PersistenceError } from '../../src/errors/persistence-error.js'
import { SeqConflictError } from '../../src/errors/seq-conflict-error.js'
import { SessionFormatUnsupportedError } from '../../src/errors/session-format-unsupported-error.js'
import type { PersistenceAdapter } from '../../src/persistence/persistence-adapter.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import { type SqlitePersistenceOptions, sqlitePersistence } from '../../src/sqlite/sqlite-persistence.js'
import { baseLog, eventsFrom, headerOf, turnStart } from '../../src/testing/conformance/conformance-events.js'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { expectOneWinnerPerRace } from '../helpers/race-new-id.js'
import { sqliteFile, withDatabase } from './sqlite-target.js'

let dir = ''
let path = ''
const adapters: PersistenceAdapter[] = []

function open(options: Omit<SqlitePersistenceOptions, 'path'> = {}): PersistenceAdapter {
  const adapter = sqlitePersistence({ path, ...options })
  adapters.push(adapter)
  return adapter
}

async function fresh(): Promise<void> {
  ;({ dir, path } = await sqliteFile())
}

afterEach(async () => {
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => undefined)
  if (dir !== '') await rm(dir, { recursive: true, force: true })
  dir = ''
})

async function rejection(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action()
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

/** A stored session `id` with the base log, and the lease it was written under. */
async function stored(adapter: PersistenceAdapter, id: string) {
  await adapter.create(headerOf(id))
  const lease = await adapter.acquire(id)
  const log = baseLog()
  await adapter.append(id, log, { expectedSeq: 0, lease })
  return { lease, log }
}

function texts(events: readonly SessionEvent[]): string[] {
  return events.map((event) => JSON.stringify(event))
}

describe('options', () => {
  test.each([
    ['neither path nor database', {}, 'path'],
    ['both path and database', { path: 'a.db', database: { prepare() {}, exec() {}, pragma() {} } }, 'path'],
    ['an empty path', { path: '' }, 'path'],
    ['a database that is none', { database: {} }, 'database'],
    ['a bad synchronous', { path: 'a.db', synchronous: 'off' }, 'synchronous'],
    ['a negative busyTimeoutMs', { path: 'a.db', busyTimeoutMs: -1 }, 'busyTimeoutMs'],
    ['a lease TTL not above the heartbeat', { path: 'a.db', lease: { ttlMs: 1000, heartbeatMs: 1000 } }, 'lease'],
    ['an unknown key', { path: 'a.db', dir: '.' }, 'dir'],
  ])('%s is InvalidOptionsError naming the option', (_what, options, option) => {
    let error: unknown
    try {
      sqlitePersistence(options as unknown as SqlitePersistenceOptions)
    } catch (thrown) {
      error = thrown
    }
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: ErrorCode.INVALID_OPTIONS, field: option })
    expect(String((error as Error).message)).toContain('sqlitePersistence options')
  })

  test('the factory opens nothing: the file appears at the first operation', async () => {
    await fresh()
    const adapter = open()
    expect(adapter.name).toBe('sqlite')
    expect(existsSync(path)).toBe(false)
    await adapter.list()
    expect(existsSync(path)).toBe(true)
    expect(withDatabase(path, (database) => database.pragma('journal_mode', { simple: true }))).toBe('wal')
  })
})

describe('schema versions', () => {
  test('a schema from a newer Yoke is SCHEMA_TOO_NEW naming both versions, on every call, with nothing written', async () => {
    await fresh()
    withDatabase(path, (database) => {
      database.exec('CREATE TABLE yoke_schema (version INTEGER NOT NULL); INSERT INTO yoke_schema VALUES (7)')
    })
    const tablesBefore = withDatabase(path, (database) =>
      database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all(),
    )
    const adapter = open()
    for (const call of [() => adapter.list(), () => adapter.acquire('s1'), () => adapter.create(headerOf('s1'))]) {
      const error = await rejection(call)
      expect(SessionFormatUnsupportedError.is(error)).toBe(true)
      expect(error).toMatchObject({
        code: ErrorCode.SCHEMA_TOO_NEW,
        storedVersion: 7,
        supportedVersion: 1,
        direction: 'newer',
        location: `sqlite:${path}`,
      })
    }
    const tablesAfter = withDatabase(path, (database) =>
      database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all(),
    )
    expect(tablesAfter).toEqual(tablesBefore)
    expect(withDatabase(path, (database) => database.prepare('SELECT version FROM yoke_schema').all())).toEqual([
      { version: 7 },
    ])
  })

  test('a second start over a migrated file keeps its data and version', async () => {
    await fresh()
    const first = open()
    await stored(first, 's1')
    await first.close()
    const second = open()
    expect((await second.load('s1')).events).toHaveLength(6)
    expect(withDatabase(path, (database) => database.prepare('SELECT version FROM yoke_schema').all())).toEqual([
      { version: 1 },
    ])
  })
})

describe('idempotent re-append', () => {
  test('the same batch sent twice is stored once; a different batch at a stale seq is SeqConflictError', async () => {
    await fresh()
    const adapter = open()
    const { lease, log } = await stored(adapter, 's1')
    const next = eventsFrom(6, [turnStart(2)])
    await adapter.append('s1', next, { expectedSeq: 6, lease })
    const revision = (await adapter.load('s1')).revision
    // The reply was lost, so the batch comes again: it resolves and writes nothing.
    await adapter.append('s1', next, { expectedSeq: 6, lease, texts: texts(next) })
    const after = await adapter.load('s1')
    expect(texts(after.events)).toEqual(texts([...log, ...next]))
    expect(after.revision).toBe(revision)
    const other = eventsFrom(6, [{ type: 'test/note', data: { other: true } }])
    const error = await rejection(() => adapter.append('s1', other, { expectedSeq: 6, lease }))
    expect(SeqConflictError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: ErrorCode.SEQ_CONFLICT, expectedSeq: 6, storedSeq: 7 })
    expect(texts((await adapter.load('s1')).events)).toEqual(texts([...log, ...next]))
  })

  test('a retry of the first batch resolves even though create registered the id', async () => {
    await fresh()
    const adapter = open()
    await adapter.create(headerOf('s1'))
    const lease = await adapter.acquire('s1')
    const log = baseLog()
    await adapter.append('s1', log, { expectedSeq: 0, lease })
    await adapter.append('s1', log, { expectedSeq: 0, lease })
    expect(texts((await adapter.load('s1')).events)).toEqual(texts(log))
  })

  test('any batch stored as it is resolves and writes nothing, an older one included; one reaching past the stored end or partly differing is a conflict', async () => {
    await fresh()
    const adapter = open()
    const { lease, log } = await stored(adapter, 's1')
    const next = eventsFrom(6, [turnStart(2)])
    await adapter.append('s1', next, { expectedSeq: 6, lease })
    const before = await adapter.load('s1')
    for (const [events, expectedSeq] of [
      [log, 0],
      [log.slice(5), 5],
    ] as const) {
      await adapter.append('s1', events, { expectedSeq, lease })
      const after = await adapter.load('s1')
      expect(texts(after.events)).toEqual(texts(before.events))
      expect(after.revision).toBe(before.revision)
    }
    for (const [events, expectedSeq] of [
      [[...log.slice(5), ...eventsFrom(6, [turnStart(3)])], 5],
      [[...next, ...eventsFrom(7, [turnStart(3)])], 6],
    ] as const) {
      const error = await rejection(() => adapter.append('s1', events, { expectedSeq, lease }))
      expect(error).toMatchObject({ code: ErrorCode.SEQ_CONFLICT, expectedSeq, storedSeq: 7 })
      expect((await adapter.load('s1')).revision).toBe(before.revision)
    }
  })

  test('a retry that grew is a SeqConflictError and writes nothing (the writer sends the stored batch again, then the rest)', async () => {
    await fresh()
    const adapter = open()
    const { lease, log } = await stored(adapter, 's1')
    const grown = [...log, ...eventsFrom(6, [turnStart(2)])]
    const error = await rejection(() => adapter.append('s1', grown, { expectedSeq: 0, lease }))
    expect(error).toMatchObject({ code: ErrorCode.SEQ_CONFLICT, expectedSeq: 0, storedSeq: 6 })
    expect(texts((await adapter.load('s1')).events)).toEqual(texts(log))
  })
})

describe('two real processes on one file', () => {
  let child: Bundle | undefined

  beforeAll(async () => {
    child = await bundle('test/persistence/sqlite-lease-child.ts', { external: ['better-sqlite3'] })
  }, 60_000)

  afterAll(async () => {
    await child?.remove()
  })

  test('exactly one process gets the lease of a new id; the other gets SessionLockedError naming it', async () => {
    await fresh()
    await expectOneWinnerPerRace(child!, { path })
  }, 60_000)
})

describe('sizes, ids and text', () => {
  test('a 10 MB event round-trips byte-exact', async () => {
    await fresh()
    const adapter = open()
    const { lease, log } = await stored(adapter, 's1')
    const big = eventsFrom(6, [{ type: 'test/note', data: { text: `é🙂${'x'.repeat(10 * 1024 * 1024)}` } }])
    await adapter.append('s1', big, { expectedSeq: 6, lease })
    const loaded = await open().load('s1')
    expect(texts(loaded.events)).toEqual(texts([...log, ...big]))
  }, 60_000)

  test('every id the harness accepts round-trips; ids with other characters are refused, writing nothing', async () => {
    await fresh()
    const adapter = open()
    const ids = ['alice+tag@example.com', 'acme:eu:42', 'a..b', ':', '@', 'x'.repeat(128)]
    for (const id of ids) await stored(adapter, id)
    expect((await open().list()).headers.map((header) => header.id)).toEqual([...ids].sort())
    for (const id of ['é', '🙂', 'a b', 'a/b', '', '\u0000']) {
      const error = await rejection(() => adapter.acquire(id))
      expect(error).toMatchObject({ code: ErrorCode.INVALID_SESSION_ID })
      const header = { ...headerOf('s'), id }
      expect(await rejection(() => adapter.create(header))).toMatchObject({ code: ErrorCode.INVALID_SESSION_ID })
    }
    expect(withDatabase(path, (database) => database.prepare('SELECT COUNT(*) AS n FROM yoke_leases').get())).toEqual({
      n: ids.length,
    })
  })

  test('Unicode in headers and events round-trips byte-exact', async () => {
    await fresh()
    const adapter = open()
    const header = { ...headerOf('s1'), metadata: { title: 'Grüße 👋 — ℵ', rtl: 'مرحبا', cjk: '你好' } }
    await adapter.create(header)
    const lease = await adapter.acquire('s1')
    const events = eventsFrom(0, [{ type: 'test/note', data: { text: 'a\u0000b\u2028c\uFEFF🙂' } }])
    await adapter.append('s1', events, { expectedSeq: 0, lease })
    const loaded = await open().load('s1')
    expect(JSON.stringify(loaded.header)).toBe(JSON.stringify(header))
    expect(texts(loaded.events)).toEqual(texts(events))
  })
})

describe('an injected database', () => {
  test('is used as it is and stays open after close', async () => {
    await fresh()
    const database = new Database(path)
    try {
      const adapter = sqlitePersistence({ database })
      await stored(adapter, 's1')
      await adapter.close()
      expect(database.open).toBe(true)
      expect(database.prepare('SELECT COUNT(*) AS n FROM yoke_sessions').get()).toEqual({ n: 1 })
      expect(database.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(database.pragma('synchronous', { simple: true })).toBe(2)
      expect((await open().load('s1')).events).toHaveLength(6)
    } finally {
      database.close()
    }
  })
})

describe('failures', () => {
  test('a database busy past busyTimeoutMs fails the append with WRITE_FAILED, writing nothing, while reads go on; it succeeds once free', async () => {
    await fresh()
    const adapter = open({ busyTimeoutMs: 100 })
    const { lease, log } = await stored(adapter, 's1')
    const next = eventsFrom(6, [turnStart(2)])
    const blocker = new Database(path)
    try {
      blocker.exec('BEGIN IMMEDIATE')
      const started = Date.now()
      const error = await rejection(() => adapter.append('s1', next, { expectedSeq: 6, lease }))
      expect(Date.now() - started).toBeGreaterThanOrEqual(90)
      expect(PersistenceError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: ErrorCode.WRITE_FAILED, sessionId: 's1', operation: 'append' })
      expect((error as Error).cause).toMatchObject({ code: 'SQLITE_BUSY' })
      // Reads take no write lock: they go on while another connection writes.
      expect(texts((await adapter.load('s1')).events)).toEqual(texts(log))
      expect((await adapter.list()).headers).toHaveLength(1)
      blocker.exec('ROLLBACK')
    } finally {
      blocker.close()
    }
    await adapter.append('s1', next, { expectedSeq: 6, lease })
    expect(texts((await adapter.load('s1')).events)).toEqual(texts([...log, ...next]))
  })

  test('a damaged header is reported by list and rejected by load as CORRUPT_HEADER', async () => {
    await fresh()
    const adapter = open()
    await stored(adapter, 's1')
    await stored(adapter, 's2')
    withDatabase(path, (database) =>
      database.prepare("UPDATE yoke_sessions SET header = '{nope' WHERE id = 's1'").run(),
    )
    const listing = await adapter.list()
    expect(listing.headers.map((header) => header.id)).toEqual(['s2'])
    expect(listing.damaged).toHaveLength(1)
    expect(listing.damaged[0]).toMatchObject({ code: ErrorCode.CORRUPT_HEADER, sessionId: 's1' })
    const error = await rejection(() => adapter.load('s1'))
    expect(PersistenceCorruptionError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: ErrorCode.CORRUPT_HEADER })
  })

  test('a missing row is CORRUPT_LOG naming the table and the seq', async () => {
    await fresh()
    const adapter = open()
    await stored(adapter, 's1')
    withDatabase(path, (database) => database.prepare("DELETE FROM yoke_events WHERE session = 's1' AND seq = 5").run())
    expect(await rejection(() => adapter.load('s1'))).toMatchObject({
      code: ErrorCode.CORRUPT_LOG,
      seq: 5,
      location: 'sqlite:"yoke_events":s1',
    })
  })
})

describe('start, concurrency and heartbeats', () => {
  test('a file that cannot be opened fails each call with WRITE_FAILED naming the start, and the same adapter works once it can be', async () => {
    await fresh()
    // Its directory does not exist yet: SQLite cannot create the file.
    const later = join(dir, 'later')
    const adapter = sqlitePersistence({ path: join(later, 'sessions.db') })
    adapters.push(adapter)
    const failures = [
      await rejection(() => adapter.list()),
      await rejection(() => adapter.acquire('s1')),
      await rejection(() => adapter.load('s1')),
    ]
    for (const failure of failures) {
      expect(PersistenceError.is(failure)).toBe(true)
      expect(failure).toMatchObject({ code: ErrorCode.WRITE_FAILED, operation: 'start' })
    }
    // Each call tried to start again: a failed start is not remembered.
    expect(new Set(failures).size).toBe(failures.length)
    await mkdir(later)
    const { lease, log } = await stored(adapter, 's1')
    expect(texts((await adapter.load('s1')).events)).toEqual(texts(log))
    await lease.release()
    await adapter.close()
  })

  test('many sessions written at once through one adapter all land whole (one connection, transactions in turn)', async () => {
    await fresh()
    const adapter = open()
    const ids = Array.from({ length: 20 }, (_, index) => `s${index}`)
    await Promise.all(
      ids.map(async (id) => {
        const { lease, log } = await stored(adapter, id)
        for (let seq = log.length; seq < log.length + 10; seq++) {
          await adapter.append(id, eventsFrom(seq, [{ type: 'test/note', data: { id, seq } }]), {
            expectedSeq: seq,
            lease,
          })
        }
      }),
    )
    const second = open()
    for (const id of ids) expect((await second.load(id)).events).toHaveLength(16)
  })

  test('heartbeats keep a lease alive past its TTL; a takeover ends it and aborts its signal without a write', async () => {
    await fresh()
    const lease = { ttlMs: 1000, heartbeatMs: 100 }
    const adapter = open({ lease })
    const { lease: held } = await stored(adapter, 's1')
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await adapter.append('s1', eventsFrom(6, [turnStart(2)]), { expectedSeq: 6, lease: held })
    const other = open({ lease })
    expect(await rejection(() => other.acquire('s1'))).toMatchObject({ code: ErrorCode.SESSION_LOCKED })
    await other.breakLease!('s1')
    const taken = await other.acquire('s1')
    // The holder's next heartbeat finds the row taken; nothing else tells it.
    for (let wait = 0; wait < 100 && !held.signal.aborted; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(held.signal.aborted).toBe(true)
    expect(LeaseLostError.is(held.signal.reason)).toBe(true)
    expect(held.signal.reason).toMatchObject({ holder: { owner: taken.owner } })
  })
})

describe('inspectLease and breakLease', () => {
  test('inspect names the holder by the database clock; break ends it, the holder learns LeaseLostError', async () => {
    await fresh()
    const adapter = open()
    const other = open()
    const { lease } = await stored(adapter, 's1')
    const seen = await other.inspectLease!('s1')
    expect(seen).toMatchObject({ sessionId: 's1', live: true, holder: { owner: lease.owner, epoch: lease.epoch } })
    expect(seen!.ageMs).toBeGreaterThanOrEqual(0)
    expect(seen!.ageMs).toBeLessThan(5000)
    expect(await other.inspectLease!('nobody')).toBeUndefined()
    expect(await other.breakLease!('s1')).toMatchObject({ holder: { owner: lease.owner } })
    expect(await other.inspectLease!('s1')).toBeUndefined()
    const error = await rejection(() => adapter.append('s1', eventsFrom(6, [turnStart(2)]), { expectedSeq: 6, lease }))
    expect(LeaseLostError.is(error)).toBe(true)
    expect(lease.signal.aborted).toBe(true)
    const taken = await other.acquire('s1')
    expect(taken.epoch).toBeGreaterThan(lease.epoch)
    expect(taken.tookOver).toBeUndefined()
    await lease.release()
    expect(await other.inspectLease!('s1')).toMatchObject({ holder: { owner: taken.owner } })
  })
})

describe('through a harness', () => {
  test('a scripted turn is stored; a new harness over the file resumes the agent with its history', async () => {
    await fresh()
    const first = await createHarness({
      persistence: sqlitePersistence({ path }),
      model: scriptedModel([text('hello there')]),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    const agent = await first.createAgent({ sessionId: 'chat:1' })
    expect(await agent.run('hi')).toMatchObject({ turn: 1, text: 'hello there' })
    await first.close()

    const second = await createHarness({
      persistence: sqlitePersistence({ path }),
      model: scriptedModel([text('again')]),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    try {
      expect((await second.listSessions()).map((entry) => entry.id)).toEqual(['chat:1'])
      const resumed = await second.resumeAgent('chat:1')
      expect(await resumed.run('more')).toMatchObject({ turn: 2, text: 'again' })
    } finally {
      await second.close()
    }
    const log = await open().load('chat:1')
    expect(log.events.filter((event) => event.type === 'turn/end')).toHaveLength(2)
    expect(JSON.stringify(log.events)).toContain('hello there')
  })
})
