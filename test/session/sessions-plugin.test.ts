import { afterEach, describe, expect, test } from 'vitest'
import { definePlugin, type Harness, type HarnessOptions, type Session, SessionVetoError, services } from 'yoke'
import { sessionEvents, HarnessSessionRegistry } from '../../src/session/index.js'
import { L1, TE, TS } from './builders.js'
import { append, freshHarness } from './session-helpers.js'

const open: Harness[] = []

async function start(options: HarnessOptions = {}): Promise<Harness> {
  const harness = await freshHarness(options)
  open.push(harness)
  return harness
}

afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close()
})

describe('the session entry', () => {
  test('is the first entry of the default bundle and provides sessions', async () => {
    const harness = await start()
    const entry = harness.describe().entries.find((candidate) => candidate.id === 'session')
    expect(entry).toBeDefined()
    expect(entry).toMatchObject({
      id: 'session',
      name: 'session',
      source: 'default',
      disabled: false,
      provides: ['sessions'],
    })
    expect(entry?.provides).toEqual(['sessions'])
    expect(harness.describe().entries[0]?.id).toBe('session')
  })

  test('harness.ctx.sessions is the registry and works end to end', async () => {
    const harness = await start()
    const sessions = harness.ctx.sessions
    expect(sessions).toBeInstanceOf(HarnessSessionRegistry)
    expect(harness.ctx.get(services.sessions)).toBe(sessions)
    const session = sessions.create()
    expect(session.id).toBe('s1')
    for (const plan of L1()) append(session, plan)
    expect(sessions.get('s1')).toBe(session)
    expect(sessions.list()).toEqual([session])
    const child = sessions.fork('s1')
    expect(child.id).toBe('s2')
    expect(sessions.list()).toEqual([session, child])
    // The persistence entry listens to session/flush and writes the session out.
    expect(await sessions.flush(session)).toBe(true)
    await sessions.dispose('s2')
    expect(sessions.get('s2')).toBeUndefined()
    expect(child.disposed).toBe(true)
    expect(sessions.list()).toEqual([session])
    expect(sessions.catalog.eventTypes()).toBe(sessions.eventTypes())
  })

  test('a plugin injecting sessions gets the same registry; its guards end with it', async () => {
    const harness = await start()
    const seen: number[] = []
    const guard = definePlugin({
      name: 'guard',
      inject: [services.sessions],
      apply(ctx) {
        ctx.sessions.addCommitGuard(
          (event) => {
            seen.push(event.seq)
            if (event.type === 'turn/end') throw new Error('no ending')
          },
          { label: 'no-end' },
        )
        ctx.sessions.create({ id: 'from-plugin' })
      },
    })
    const handle = await harness.ctx.plugin(guard)
    const sessions = harness.ctx.sessions
    const session = sessions.get('from-plugin') as Session
    expect(session).toBeDefined()
    append(session, TS(1))
    let vetoed: unknown
    try {
      append(session, TE(1, 'completed'))
    } catch (error) {
      vetoed = error
    }
    expect(SessionVetoError.is(vetoed)).toBe(true)
    expect(vetoed).toMatchObject({ code: 'APPEND_VETOED', guard: 'no-end' })
    expect(seen).toEqual([0, 1])
    await handle.dispose()
    append(session, TE(1, 'completed'))
    expect(seen).toEqual([0, 1])
    expect(session.length).toBe(2)
    expect(sessions.get('from-plugin')).toBe(session)
  })

  test('each harness has its own registry and catalog', async () => {
    const first = await start()
    const second = await start()
    expect(first.ctx.sessions).not.toBe(second.ctx.sessions)
    first.ctx.sessions.registerEventType('test/note')
    expect(first.ctx.sessions.eventTypes()).toContain('test/note')
    expect(second.ctx.sessions.eventTypes()).not.toContain('test/note')
    first.ctx.sessions.create()
    expect(second.ctx.sessions.list()).toEqual([])
    expect(second.ctx.sessions.create().id).toBe('s1')
  })

  test('disabling the entry leaves no sessions service', async () => {
    // The persistence, retry and agent-loop entries inject sessions, so they are disabled with it.
    const harness = await start({
      patches: [
        { id: 'session', disabled: true },
        { id: 'persistence', disabled: true },
        { id: 'retry', disabled: true },
        { id: 'agent-loop', disabled: true },
        { id: 'compaction', disabled: true },
      ],
    })
    expect(harness.describe().entries.find((entry) => entry.id === 'session')?.disabled).toBe(true)
    expect(() => harness.ctx.sessions).toThrow()
    expect(harness.ctx.getOptional(services.sessions)).toBeUndefined()
  })
})

describe('closing the harness', () => {
  test('disposes every live session, firing session/disposed once each', async () => {
    const disposed: string[] = []
    const watcher = definePlugin({
      name: 'watcher',
      events: [sessionEvents],
      apply(ctx) {
        ctx.on('session/disposed', ({ session }) => {
          disposed.push(session.id)
        })
      },
    })
    const harness = await freshHarness({ patches: [{ id: 'watcher', plugin: watcher, before: 'session' }] })
    const sessions = harness.ctx.sessions
    const first = sessions.create()
    for (const plan of L1()) append(first, plan)
    const second = sessions.create()
    const third = sessions.create()
    await sessions.dispose(third)
    expect(disposed).toEqual(['s3'])
    await harness.close()
    expect(first.disposed).toBe(true)
    expect(second.disposed).toBe(true)
    expect([...disposed].sort()).toEqual(['s1', 's2', 's3'])
    expect(disposed).toHaveLength(3)
    expect(sessions.list()).toEqual([])
    expect(sessions.get('s1')).toBeUndefined()
    let failure: unknown
    try {
      append(first, TS(2))
    } catch (error) {
      failure = error
    }
    expect(failure).toMatchObject({ code: 'SESSION_DISPOSED' })
    expect(first.length).toBe(6)
  })

  test('a registry held from before close is empty afterwards', async () => {
    const harness = await freshHarness()
    const sessions = harness.ctx.sessions
    const held = [sessions.create(), sessions.create({ id: 'named' })]
    await harness.close()
    expect(held.every((session) => session.disposed)).toBe(true)
    expect(sessions.list()).toEqual([])
  })
})
