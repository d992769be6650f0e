/**
 * Crash repair through the persistence coordinator (`load`, `inspect`,
 * `prepare`, `repair`): interrupted turns get their closers, torn tails are cut, damage is
 * quarantined on request, at most one repair runs per call, and failures leave storage as the
 * next load can repair again.
 *
 * @module
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Harness,
  interruptedTurnClosers,
  jsonlPersistence,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceCorruptionError,
  PersistenceError,
  SeqConflictError,
  type SessionEvent,
} from 'yoke'
import type { JsonlFileSystem, JsonlPersistence } from '../../src/persistence/index.js'
import { faultyPersistence } from 'yoke/testing'
import { nodeFileSystem } from '../../src/persistence/jsonl/jsonl-file-system.js'
import { callsOf, headerLine, json, lineOf, log, seqsOf, settle, store, typesOf } from './coordinator-fixtures.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { AM, call, logOf, SS, TC, TS } from '../session/builders.js'
import { expectError, field, freshHarness } from '../session/session-helpers.js'

/** One completed turn plus an open turn 2 with an open step: eight events, without a torn tail. */
const eight = (): SessionEvent[] => log([TS(2), SS(2, 1)])

let dir: string
let harnesses: Harness[]
let adapters: PersistenceAdapter[]

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-coordinator-repair-'))
  harnesses = []
  adapters = []
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close().catch(() => {})
  for (const adapter of adapters.splice(0)) await adapter.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

function J(options: { fileSystem?: JsonlFileSystem; now?: () => number } = {}): JsonlPersistence {
  const adapter = jsonlPersistence({ dir, ...options })
  adapters.push(adapter)
  return adapter
}

async function start(persistence: PersistenceAdapter): Promise<Harness> {
  const harness = await freshHarness({ persistence })
  harnesses.push(harness)
  return harness
}

async function writeLog(body: string, name = 's1.jsonl'): Promise<string> {
  const content = `${headerLine}\n${body}`
  await writeFile(join(dir, name), content)
  return content
}

const textOf = async (name = 's1.jsonl'): Promise<string> => readFile(join(dir, name), 'utf8')

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

describe('an interrupted turn', () => {
  test('inspect shows the closers in memory only; load commits them once', async () => {
    const inner = J()
    await store(inner, [eight()])
    const adapter = faultyPersistence(inner)
    const harness = await start(adapter)
    const before = await textOf()
    const { revision } = await inner.load('s1')
    const inspected = await harness.persistence.inspect('s1')
    expect(seqsOf(inspected.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(inspected.events[8]).toStrictEqual({
      type: 'step/end',
      seq: 8,
      time: 1000,
      data: { turn: 2, step: 1, meta: { synthetic: true } },
    })
    expect(inspected.events[9]).toStrictEqual({
      type: 'turn/end',
      seq: 9,
      time: 1000,
      data: { turn: 2, reason: { kind: 'interrupted' }, meta: { synthetic: true } },
    })
    expect(inspected.repairPending).toBe(true)
    expect(inspected.revision).toBe(revision)
    expect(inspected).not.toHaveProperty('droppedBytes')
    expect(await textOf()).toBe(before)
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(0)
    expect(callsOf(adapter, 'acquire')).toHaveLength(0)

    const loaded = await harness.persistence.load('s1')
    expect(loaded.events.map(json)).toEqual(inspected.events.map(json))
    expect(loaded.revision).not.toBe(revision)
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(1)
    expect(callsOf(adapter, 'commitRepair')[0]?.seqs).toEqual([8, 9])
    expect(await textOf()).toBe(before + inspected.events.slice(8).map(lineOf).join(''))

    const again = await harness.persistence.load('s1')
    expect(again.events.map(json)).toEqual(loaded.events.map(json))
    expect(again.revision).toBe(loaded.revision)
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(1)
    expect((await harness.persistence.inspect('s1')).repairPending).toBe(false)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('a recorded tool call without result gets TOOL_OUTCOME_UNKNOWN, then step/end and turn/end', async () => {
    await store(J(), [log([TS(2), SS(2, 1), AM(2, 1, call('c1')), TC(2, 1, 'c1')])])
    const harness = await start(J())
    const loaded = await harness.persistence.load('s1')
    expect(seqsOf(loaded.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    const result = loaded.events[10] as SessionEvent
    expect(result.type).toBe('tool/result')
    expect(field(result.data, 'message', 'source', 'callId')).toBe('c1')
    expect(field(result.data, 'error', 'code')).toBe('TOOL_OUTCOME_UNKNOWN')
    expect(result.sourceEventSeqs).toEqual([9])
    expect(typesOf(loaded.events.slice(11))).toEqual(['step/end', 'turn/end'])
    expect(field(loaded.events[12]?.data, 'reason', 'kind')).toBe('interrupted')
    expect((await J().load('s1')).events.map(json)).toEqual(loaded.events.map(json))
  })

  test('inspect, prepare, release, prepare: one repair in all', async () => {
    const inner = memoryPersistence()
    await store(inner, [logOf([TS(1)])])
    const adapter = faultyPersistence(inner)
    const harness = await start(adapter)
    const revision = (await inner.load('s1')).revision
    const inspected = await harness.persistence.inspect('s1')
    expect(typesOf(inspected.events)).toEqual(['turn/start', 'turn/end'])
    expect(field(inspected.events[1]?.data, 'reason', 'kind')).toBe('interrupted')
    expect((await inner.load('s1')).revision).toBe(revision)
    expect((await inner.load('s1')).events).toHaveLength(1)
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(0)

    const prepared = await harness.persistence.prepare('s1')
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(1)
    expect(typesOf((await inner.load('s1')).events)).toEqual(['turn/start', 'turn/end'])
    expect(prepared.events.map(json)).toEqual(inspected.events.map(json))
    await prepared.release()

    const again = await harness.persistence.prepare('s1')
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(1)
    expect(typesOf(again.events)).toEqual(['turn/start', 'turn/end'])
    await again.release()
  })
})

describe('torn tails', () => {
  test('an unparsable last line is cut, with no closers for a closed turn', async () => {
    const tail = '{"type":"turn/sta\n'
    await writeLog(`${log().map(lineOf).join('')}${tail}`)
    const adapter = faultyPersistence(J())
    const harness = await start(adapter)
    const inspected = await harness.persistence.inspect('s1')
    expect(inspected.events.map(json)).toEqual(log().map(json))
    expect(inspected.repairPending).toBe(true)
    expect(inspected.droppedBytes).toBe(Buffer.byteLength(tail))
    const loaded = await harness.persistence.load('s1')
    expect(loaded.events.map(json)).toEqual(log().map(json))
    expect(callsOf(adapter, 'commitRepair').map((entry) => entry.seqs)).toEqual([[]])
    expect(await textOf()).toBe(`${headerLine}\n${log().map(lineOf).join('')}`)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('a torn record inside an open step: cut, closed, and resumable', async () => {
    await writeLog(`${eight().map(lineOf).join('')}{"type":"assistant/chunk","seq":8,"ti`)
    const harness = await start(J())
    const loaded = await harness.persistence.load('s1')
    expect(seqsOf(loaded.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(loaded.events.slice(8).map(json)).toEqual(interruptedTurnClosers(eight()).map(json))
    expect(await textOf()).toBe(`${headerLine}\n${[...eight(), ...loaded.events.slice(8)].map(lineOf).join('')}`)
  })

  test('a failed closers write after the cut rejects WRITE_FAILED; the next load repairs identically', async () => {
    await writeLog(`${eight().map(lineOf).join('')}{"type":"assistant/chunk","seq":8,"ti`)
    const injected = new Error('disk full')
    let failures = 1
    let armed = false
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      ftruncate: async (handle, length) => {
        await nodeFileSystem.ftruncate(handle, length)
        if (failures > 0) armed = true
      },
      write: async (handle, buffer, offset, length, position) => {
        if (armed) {
          armed = false
          failures--
          throw injected
        }
        return nodeFileSystem.write(handle, buffer, offset, length, position)
      },
    }
    const harness = await start(J({ fileSystem }))
    const error = expectError(await rejectionOf(harness.persistence.load('s1')), PersistenceError, 'WRITE_FAILED', {
      sessionId: 's1',
    })
    expect(error.cause).toBe(injected)
    expect(await textOf()).toBe(`${headerLine}\n${eight().map(lineOf).join('')}`)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
    const loaded = await harness.persistence.load('s1')
    expect(loaded.events.slice(0, 8).map(json)).toEqual(eight().map(json))
    expect(loaded.events.slice(8).map(json)).toEqual(interruptedTurnClosers(eight()).map(json))
    expect(await textOf()).toBe(`${headerLine}\n${loaded.events.map(lineOf).join('')}`)
  })
})

describe('repair', () => {
  test('reports none for a balanced log, and changes nothing', async () => {
    await store(J(), [log()])
    const harness = await start(J())
    const before = await textOf()
    expect(await harness.persistence.repair('s1')).toStrictEqual({ action: 'none', keptEvents: 6, closers: [] })
    expect(await harness.persistence.repair('s1', { truncateAtCorruption: true })).toStrictEqual({
      action: 'none',
      keptEvents: 6,
      closers: [],
    })
    expect(await textOf()).toBe(before)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])
  })

  test('reports the closers it appended by type', async () => {
    await store(J(), [eight()])
    const harness = await start(J())
    expect(await harness.persistence.repair('s1')).toStrictEqual({
      action: 'repaired',
      keptEvents: 8,
      closers: ['step/end', 'turn/end'],
    })
    expect(await harness.persistence.repair('s1')).toStrictEqual({ action: 'none', keptEvents: 10, closers: [] })
  })

  test('reports the bytes a cut tail dropped', async () => {
    const tail = '{"type":"turn/sta\n'
    await writeLog(`${log().map(lineOf).join('')}${tail}`)
    const harness = await start(J())
    expect(await harness.persistence.repair('s1')).toStrictEqual({
      action: 'repaired',
      keptEvents: 6,
      closers: [],
      droppedBytes: Buffer.byteLength(tail),
    })
  })

  test('refuses damage without truncateAtCorruption; quarantines it with the option', async () => {
    const damaged = await writeLog(`${log().map(lineOf).join('')}xx\n${lineOf(log([TS(2)])[6])}`)
    const mtime = (await stat(join(dir, 's1.jsonl'))).mtimeMs
    const harness = await start(J({ now: () => 777 }))
    expectError(await rejectionOf(harness.persistence.repair('s1')), PersistenceCorruptionError, 'CORRUPT_LOG', {
      line: 8,
      defect: 'unparsable',
      location: join(dir, 's1.jsonl'),
    })
    expectError(await rejectionOf(harness.persistence.load('s1')), PersistenceCorruptionError, 'CORRUPT_LOG', {
      line: 8,
    })
    expect(await textOf()).toBe(damaged)
    expect((await stat(join(dir, 's1.jsonl'))).mtimeMs).toBe(mtime)
    expect(await readdir(dir)).toEqual(['s1.jsonl'])

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
    expect(await harness.persistence.repair('s1')).toStrictEqual({ action: 'none', keptEvents: 6, closers: [] })
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's1.jsonl.corrupt-777'])
  })

  test('a rerun after a crash between the quarantine link and the rename finishes with one quarantine file', async () => {
    const damaged = await writeLog(`${log().map(lineOf).join('')}xx\n${lineOf(log([TS(2)])[6])}`)
    let crash = true
    const fileSystem: JsonlFileSystem = {
      ...nodeFileSystem,
      rename: async (from, to) => {
        if (crash && to === join(dir, 's1.jsonl')) {
          crash = false
          throw new Error('crash before the rename')
        }
        return nodeFileSystem.rename(from, to)
      },
    }
    let clock = 777
    const harness = await start(J({ fileSystem, now: () => clock++ }))
    await rejectionOf(harness.persistence.repair('s1', { truncateAtCorruption: true }))
    const afterCrash = (await readdir(dir)).sort()
    expect(afterCrash).toHaveLength(2)
    const quarantine = afterCrash[1] as string
    expect(quarantine).toMatch(/^s1\.jsonl\.corrupt-\d+$/)
    const report = await harness.persistence.repair('s1', { truncateAtCorruption: true })
    expect(report).toMatchObject({ action: 'quarantined', keptEvents: 6, quarantine: join(dir, quarantine) })
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', quarantine])
    expect(await textOf(quarantine)).toBe(damaged)
    expect(await textOf()).toBe(`${headerLine}\n${log().map(lineOf).join('')}`)
  })

  test('a quarantine name taken by another file moves on to the next number', async () => {
    const damaged = await writeLog(`${log().map(lineOf).join('')}xx\n${lineOf(log([TS(2)])[6])}`)
    await writeFile(join(dir, 's1.jsonl.corrupt-777'), 'an older quarantine')
    const harness = await start(J({ now: () => 777 }))
    const report = await harness.persistence.repair('s1', { truncateAtCorruption: true })
    expect(report).toMatchObject({ action: 'quarantined', quarantine: join(dir, 's1.jsonl.corrupt-778') })
    expect(await textOf('s1.jsonl.corrupt-777')).toBe('an older quarantine')
    expect(await textOf('s1.jsonl.corrupt-778')).toBe(damaged)
  })
})

describe('failures and limits', () => {
  test('a plain commitRepair error is wrapped as WRITE_FAILED; a HarnessError passes through; the lease is released', async () => {
    const inner = memoryPersistence()
    await store(inner, [eight()])
    const plain = new Error('EIO')
    const conflict = new SeqConflictError({
      code: 'SEQ_CONFLICT',
      sessionId: 's1',
      detail: 'injected',
      expectedRevision: 'r',
    })
    const answers: Error[] = [plain, conflict]
    const adapter = faultyPersistence(inner, {
      fail: (entry) => (entry.method === 'commitRepair' ? answers.shift() : undefined),
    })
    const harness = await start(adapter)
    const wrapped = expectError(await rejectionOf(harness.persistence.load('s1')), PersistenceError, 'WRITE_FAILED', {
      sessionId: 's1',
    })
    expect(wrapped.cause).toBe(plain)
    expect(await rejectionOf(harness.persistence.load('s1'))).toBe(conflict)
    expect((await harness.persistence.load('s1')).events).toHaveLength(10)
    expect(callsOf(adapter, 'acquire')).toHaveLength(3)
  })

  test('a repair that leaves the turn open is REPAIR_INCOMPLETE after exactly one attempt; the lease is released', async () => {
    const inner = memoryPersistence()
    await store(inner, [eight()])
    const adapter = faultyPersistence({ ...inner, name: 'lazy', commitRepair: async () => {} })
    const harness = await start(adapter)
    expectError(await rejectionOf(harness.persistence.load('s1')), PersistenceCorruptionError, 'REPAIR_INCOMPLETE', {
      sessionId: 's1',
    })
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(1)
    expect(callsOf(adapter, 'load')).toHaveLength(2)
    expectError(await rejectionOf(harness.persistence.repair('s1')), PersistenceCorruptionError, 'REPAIR_INCOMPLETE')
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(2)
    const lease = await inner.acquire('s1')
    await lease.release()
  })

  test('an abort during commitRepair takes effect after the commit', async () => {
    const held = gate()
    const inner = memoryPersistence()
    await store(inner, [eight()])
    const adapter = faultyPersistence(inner, {
      hold: (entry) => (entry.method === 'commitRepair' ? held.promise : undefined),
    })
    const harness = await start(adapter)
    const controller = new AbortController()
    const loading = harness.persistence.load('s1', { signal: controller.signal })
    await settle()
    expect(callsOf(adapter, 'commitRepair')).toHaveLength(1)
    const reason = new Error('enough')
    controller.abort(reason)
    held.open()
    expect(await rejectionOf(loading)).toBe(reason)
    expect((await inner.load('s1')).events).toHaveLength(10)
    const inspected = await harness.persistence.inspect('s1')
    expect(inspected.repairPending).toBe(false)
    const lease = await inner.acquire('s1')
    await lease.release()
  })
})
