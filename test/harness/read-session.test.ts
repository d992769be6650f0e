/**
 * `harness.readSession`: a session's history without opening it, over the memory and the JSONL
 * adapters. A stored log's bytes and last seq are the same before and after (where `openAgent`
 * appends a `session/end-seed` marker), no lease is taken (a log another harness holds is
 * readable), a live session is read from memory, and the failures are typed.
 *
 * @module
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  type Harness,
  HarnessClosedError,
  memoryPersistence,
  type PersistenceAdapter,
  PersistenceError,
} from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { createMemoryStore } from '../../src/persistence/index.js'
import { rejectionOf } from '../helpers/outcomes.js'

const harnesses: Harness[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** A storage: how to make an adapter over it, and its stored bytes of a session. */
interface Storage {
  adapter(): PersistenceAdapter | { dir: string }
  bytes(id: string): Promise<Uint8Array | undefined>
}

async function freshStorage(kind: 'memory' | 'jsonl'): Promise<Storage> {
  if (kind === 'memory') {
    const store = createMemoryStore()
    return { adapter: () => memoryPersistence({ store }), bytes: async (id) => store.read(id) }
  }
  const dir = await mkdtemp(join(tmpdir(), 'yoke-read-session-'))
  dirs.push(dir)
  return {
    adapter: () => ({ dir }),
    bytes: (id) =>
      readFile(join(dir, `${id}.jsonl`)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined
        throw error
      }),
  }
}

async function harnessOver(storage: Storage, replies: readonly string[] = []): Promise<Harness> {
  const harness = await createHarness({
    persistence: storage.adapter(),
    model: scriptedModel(replies.map((reply) => text(reply))),
    clock: fakeClock({ now: 1000 }),
    ids: fakeIds(),
  })
  harnesses.push(harness)
  return harness
}

/** Stores session `id` with two completed turns, then closes that harness. */
async function storeSession(storage: Storage, id: string): Promise<void> {
  const harness = await harnessOver(storage, ['one', 'two'])
  const agent = await harness.createAgent({ sessionId: id })
  await agent.run('first')
  await agent.run('second')
  await harness.close()
}

describe.each(['memory', 'jsonl'] as const)('over %s', (kind) => {
  test('a stored session: header, events and model history, with not one byte written or event appended', async () => {
    const storage = await freshStorage(kind)
    await storeSession(storage, 'chat')
    const before = await storage.bytes('chat')
    const harness = await harnessOver(storage)
    const history = await harness.readSession('chat')
    expect(history).toMatchObject({ id: 'chat', live: false, repairPending: false, header: { id: 'chat' } })
    const inspected = await harness.persistence.inspect('chat')
    expect(history.events).toEqual(inspected.events)
    expect(history.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 2 } })
    expect(history.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', [{ type: 'text', text: 'first' }]],
      ['assistant', [{ type: 'text', text: 'one' }]],
      ['user', [{ type: 'text', text: 'second' }]],
      ['assistant', [{ type: 'text', text: 'two' }]],
    ])
    expect(Object.isFrozen(history)).toBe(true)
    // Read twice: still the same bytes, nothing live, no lease (a resume in this harness works).
    await harness.readSession('chat')
    expect(await storage.bytes('chat')).toEqual(before)
    expect(harness.sessions.get('chat')).toBeUndefined()
    expect(harness.agents.get('chat')).toBeUndefined()

    // openAgent, by contrast, writes: the resume logs a session/end-seed marker.
    const agent = await harness.openAgent('chat')
    expect(agent.session.deriveMessages()).toEqual(history.messages)
    expect(agent.session.events.slice(0, history.events.length)).toEqual(history.events)
    expect(agent.session.events.at(-1)?.type).toBe('session/end-seed')
    await harness.close()
    expect((await storage.bytes('chat'))?.length).toBeGreaterThan(before?.length ?? 0)
  })

  test('a live session is read from memory, unflushed events included; a log another harness holds is readable', async () => {
    const storage = await freshStorage(kind)
    const owner = await harnessOver(storage, ['hello'])
    const agent = await owner.createAgent({ sessionId: 'held' })
    await agent.run('hi')
    const live = await owner.readSession('held')
    expect(live).toMatchObject({ id: 'held', live: true, repairPending: false })
    expect(live.events).toEqual(agent.session.events)
    expect(live.messages).toEqual(agent.session.deriveMessages())
    await owner.sessions.flush(agent.session)

    const reader = await harnessOver(storage)
    const before = await storage.bytes('held')
    const stored = await reader.readSession('held')
    expect(stored.live).toBe(false)
    expect(stored.events).toEqual(agent.session.events)
    expect(await storage.bytes('held')).toEqual(before)
    // The owner still holds the session: a resume elsewhere is refused, the read was not.
    expect(await rejectionOf(reader.resumeAgent('held'))).toMatchObject({ name: 'SessionLockedError' })
  })

  test('an unknown id rejects PersistenceError SESSION_NOT_FOUND; after close HarnessClosedError names readSession', async () => {
    const storage = await freshStorage(kind)
    const harness = await harnessOver(storage)
    const missing = await rejectionOf(harness.readSession('nobody'))
    expect(PersistenceError.is(missing)).toBe(true)
    expect(missing).toMatchObject({ code: 'SESSION_NOT_FOUND', sessionId: 'nobody' })
    expect(await storage.bytes('nobody')).toBeUndefined()
    await harness.close()
    const closed = await rejectionOf(harness.readSession('nobody'))
    expect(HarnessClosedError.is(closed)).toBe(true)
    expect(closed).toMatchObject({ code: 'HARNESS_CLOSED', operation: 'readSession' })
  })
})
