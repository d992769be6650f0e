/**
 * `openAgent`: single-flight over a stored session, create for an
 * unknown id, the live case, and failures that are not "not found".
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Harness,
  createHarness,
  HarnessClosedError,
  jsonlPersistence,
  PresetMismatchError,
  definePreset,
  type PresetDefinition,
} from 'yoke'
import { faultyPersistence, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'

let dir: string
/** One id source across the "restarts" of a test, as one process's would be (message ids stay unique). */
let ids: ReturnType<typeof fakeIds>
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-open-'))
  ids = fakeIds()
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  await rm(dir, { recursive: true, force: true })
})

async function harnessOver(options: Parameters<typeof createHarness>[0]): Promise<Harness> {
  const harness = await createHarness({ clock: fakeClock(), ids, ...options })
  harnesses.push(harness)
  return harness
}

/** Stores session `s` with one completed turn in `dir`, then closes that harness. */
async function storeSession(
  id: string,
  presets: { presets?: readonly PresetDefinition[] } = {},
  preset?: string,
): Promise<void> {
  const first = await createHarness({
    persistence: { dir },
    model: scriptedModel([text('one')]),
    clock: fakeClock(),
    ids,
    ...presets,
  })
  const agent = await first.createAgent({ sessionId: id, ...(preset === undefined ? {} : { preset }) })
  await agent.run('hi')
  await first.close()
}

describe('openAgent', () => {
  test('two concurrent opens of a stored session resolve to the same agent after one load; an unknown id is created', async () => {
    await storeSession('s')
    const adapter = faultyPersistence(jsonlPersistence({ dir }))
    const model = scriptedModel([text('two')])
    const harness = await harnessOver({ persistence: adapter, model })
    const [first, second] = await Promise.all([harness.openAgent('s'), harness.openAgent('s')])
    expect(first).toBe(second)
    expect(harness.agents.get('s')).toBe(first)
    expect(adapter.calls.filter((call) => call.method === 'load' && call.sessionId === 's')).toHaveLength(1)
    expect(await first.run('again')).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'two' })

    const created = await harness.openAgent('n')
    expect(created.id).toBe('n')
    expect(created.session.length).toBe(0)
    expect(created.session.header.parentSession).toBeUndefined()
    expect(harness.agents.get('n')).toBe(created)
  })

  test('a live agent is returned as is; a later open after dispose resumes it from storage', async () => {
    const harness = await harnessOver({ persistence: { dir }, model: scriptedModel([text('a'), text('b')]) })
    const agent = await harness.createAgent({ sessionId: 'live' })
    await agent.run('x')
    expect(await harness.openAgent('live')).toBe(agent)
    await agent.dispose()
    const reopened = await harness.openAgent('live')
    expect(reopened).not.toBe(agent)
    expect(await reopened.run('y')).toMatchObject({ turn: 2, text: 'b' })
  })

  test('concurrent opens of an unknown id create it once', async () => {
    const harness = await harnessOver({ persistence: { dir }, model: scriptedModel([]) })
    const created: string[] = []
    harness.on('agent/created', ({ agent }) => created.push(agent.id))
    const [first, second] = await Promise.all([harness.openAgent('fresh'), harness.openAgent('fresh')])
    expect(first).toBe(second)
    expect(created).toEqual(['fresh'])
  })

  test('a resume failure other than SESSION_NOT_FOUND rejects every joined caller and creates nothing', async () => {
    await storeSession('p', { presets: [definePreset({ name: 'reviewer' })] }, 'reviewer')
    const harness = await harnessOver({
      persistence: { dir },
      presets: [definePreset({ name: 'reviewer' }), definePreset({ name: 'other' })],
    })
    const results = await Promise.allSettled([
      harness.openAgent('p', { preset: 'other' }),
      harness.openAgent('p', { preset: 'other' }),
    ])
    for (const result of results) {
      expect(result.status).toBe('rejected')
      const error = (result as PromiseRejectedResult).reason
      expect(PresetMismatchError.is(error)).toBe(true)
    }
    expect(harness.agents.get('p')).toBeUndefined()
    expect(harness.sessions.get('p')).toBeUndefined()
    // The failed attempt is forgotten: the next open tries again.
    expect((await harness.openAgent('p', { preset: 'reviewer' })).id).toBe('p')
  })

  test('after close it rejects HarnessClosedError naming openAgent', async () => {
    const harness = await createHarness({ clock: fakeClock(), ids: fakeIds() })
    await harness.close()
    const error = await rejectionOf(harness.openAgent('s'))
    expect(HarnessClosedError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'HARNESS_CLOSED', operation: 'openAgent' })
  })
})
