/**
 * The owner of an agent: the calling context of `ctx.agents.create` /
 * `resume`. Disposing it disposes the agent; a creation still pending rejects
 * `ContextDisposedError` and leaves nothing published; `harness.agents` agents belong to the
 * agent-loop entry.
 */
import { afterEach, describe, expect, test } from 'vitest'
import { ContextDisposedError, createHarness, type Harness, services } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
})

async function harnessOf(replies = 4): Promise<Harness> {
  const script = Array.from({ length: replies }, (_, index) => text(`reply ${index + 1}`))
  const harness = await createHarness({
    model: scriptedModel(script),
    clock: fakeClock({ now: 0 }),
    ids: fakeIds(),
    logger: recordingLogger(),
  })
  harnesses.push(harness)
  return harness
}

describe('the owner of an agent', () => {
  test('disposing the owning context disposes the agent it created', async () => {
    const harness = await harnessOf()
    const owner = harness.ctx.child('owner')
    expect(owner.agents).toBe(owner.agents)
    const agent = await owner.agents.create({ id: 'owned' })
    expect((await agent.run('hi')).text).toBe('reply 1')
    expect(harness.agents.get('owned')).toBe(agent)
    await owner.dispose()
    expect(agent.disposed).toBe(true)
    expect(harness.agents.get('owned')).toBeUndefined()
    expect(harness.sessions.get('owned')).toBeUndefined()
  })

  test('ctx.get(services.agents) is the same owner-bound view as ctx.agents', async () => {
    const harness = await harnessOf()
    const owner = harness.ctx.child('owner')
    expect(owner.get(services.agents)).toBe(owner.agents)
    expect(harness.ctx.get(services.agents)).toBe(harness.agents)
    const agent = await owner.get(services.agents).create({ id: 'via-get' })
    await owner.dispose()
    expect(agent.disposed).toBe(true)
    expect(harness.agents.get('via-get')).toBeUndefined()
  })

  test('an agent created from another agent’s context is disposed with that agent', async () => {
    const harness = await harnessOf()
    const parent = await harness.createAgent({ sessionId: 'parent' })
    const child = await parent.ctx.agents.create({ id: 'child' })
    await parent.dispose()
    expect(child.disposed).toBe(true)
    expect(harness.agents.list().map((agent) => agent.id)).toEqual([])
  })

  test('an agent disposed by itself leaves the owner, which disposes cleanly later', async () => {
    const harness = await harnessOf()
    const owner = harness.ctx.child('owner')
    const first = await owner.agents.create({ id: 'a1' })
    await first.dispose()
    const second = await owner.agents.create({ id: 'a1' })
    expect(second).not.toBe(first)
    const report = await owner.dispose()
    expect(report.errors).toEqual([])
    expect(second.disposed).toBe(true)
  })

  test('disposing the owner during setup rejects ContextDisposedError; nothing is published and the id is reusable', async () => {
    const harness = await harnessOf()
    const owner = harness.ctx.child('owner')
    let release: () => void = () => {}
    const setupStarted = new Promise<void>((resolve) => {
      release = resolve
    })
    const creating = owner.agents.create({
      id: 'pending',
      setup: async () => {
        release()
        await new Promise(() => {})
      },
    })
    await setupStarted
    await owner.dispose()
    const error = await rejectionOf(creating)
    expect(ContextDisposedError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CONTEXT_DISPOSED', context: 'harness/owner', operation: 'createAgent' })
    expect(harness.agents.get('pending')).toBeUndefined()
    expect(harness.sessions.get('pending')).toBeUndefined()
    const again = await harness.createAgent({ sessionId: 'pending' })
    expect((await again.run('hi')).reason.kind).toBe('completed')
  })

  test('agents of harness.agents and harness.createAgent outlive any other context', async () => {
    const harness = await harnessOf()
    const other = harness.ctx.child('other')
    const agent = await harness.createAgent({ sessionId: 'free' })
    await other.dispose()
    expect(agent.disposed).toBe(false)
    expect((await agent.run('hi')).reason.kind).toBe('completed')
  })

  test('ctx.agent is the nearest agent, also under a child tagged with a scope of its own', async () => {
    const harness = await harnessOf()
    const agent = await harness.createAgent({ sessionId: 'tagged' })
    expect(agent.ctx.agent).toBe(agent)
    expect(agent.ctx.child('plain').agent).toBe(agent)
    const tagged = agent.ctx.child('tagged', { scope: { id: 'not an agent' } })
    expect(tagged.agent).toBe(agent)
    expect(tagged.child('deeper').agent).toBe(agent)
    expect(harness.ctx.child('outside', { scope: { id: 'x' } }).agent).toBeUndefined()
  })
})
