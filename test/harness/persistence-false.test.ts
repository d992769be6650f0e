/**
 * `createHarness({ persistence: false })`: no store at all. Nothing is written or listed, the
 * `persistence` service is absent, a stored id cannot be resumed or opened, and create / run /
 * dispose cycles leave the harness's listener counts where they started.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, type Harness, InvalidOptionsError, ServiceMissingError } from 'yoke'
import { scriptedModel, text, tool } from 'yoke/testing'
import { inspectContext } from '../../src/kernel/index.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'

const harnesses: Harness[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const noop = defineTool({ name: 'noop', description: 'Does nothing', input: z.object({}), execute: () => 'ok' })

async function ephemeral(turns: number): Promise<Harness> {
  const harness = await createHarness({
    persistence: false,
    model: scriptedModel(Array.from({ length: turns }, () => [tool('noop', {}), text('done')]).flat()),
    tools: [noop],
  })
  harnesses.push(harness)
  return harness
}

/** Every listener of every event the harness defines, summed, with the per-event counts. */
function listeners(harness: Harness): { total: number; byEvent: Record<string, number> } {
  const byEvent: Record<string, number> = {}
  let total = 0
  for (const event of inspectContext(harness.ctx).events) {
    byEvent[event.name] = event.listeners
    total += event.listeners
  }
  return { total, byEvent }
}

describe('persistence: false', () => {
  test('agents run and dispose; nothing listens for session writes and no persistence service exists', async () => {
    const harness = await ephemeral(1)
    const { byEvent } = listeners(harness)
    for (const name of ['session/created', 'session/event', 'session/flush', 'session/disposed'])
      expect(byEvent[name] ?? 0).toBe(0)
    expect(ServiceMissingError.is(thrownBy(() => harness.persistence))).toBe(true)
    const agent = await harness.createAgent()
    const result = await agent.run('hi')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'done' })
    // A flush has nobody to ask: it resolves at once.
    expect(await harness.sessions.flush(agent.session)).toBe(false)
    expect((await harness.listSessions()).map((session) => session.id)).toEqual([agent.session.id])
    const id = agent.session.id
    await agent.dispose()
    expect(await harness.listSessions()).toEqual([])
    // Nothing was stored: the id cannot be resumed, opened or read.
    expect(ServiceMissingError.is(await rejectionOf(harness.resumeAgent(id)))).toBe(true)
    expect(ServiceMissingError.is(await rejectionOf(harness.openAgent(id)))).toBe(true)
    expect(await rejectionOf(harness.resumeAgent(id))).toMatchObject({ key: 'persistence' })
    expect(await rejectionOf(harness.readSession(id))).toMatchObject({ code: 'SESSION_NOT_FOUND', sessionId: id })
  })

  test('writes no file anywhere (the working directory stays as it was)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'yoke-ephemeral-'))
    dirs.push(dir)
    const cwd = process.cwd()
    process.chdir(dir)
    try {
      const harness = await ephemeral(2)
      const agent = await harness.createAgent()
      await agent.run('one')
      await agent.run('two')
      await agent.dispose()
      await harness.close()
    } finally {
      process.chdir(cwd)
    }
    expect(await readdir(dir)).toEqual([])
  })

  test('create / run / dispose cycles leave every listener count at its baseline', async () => {
    const cycles = 200
    const harness = await ephemeral(cycles)
    const warm = await harness.createAgent()
    await warm.run('warm-up')
    await warm.dispose()
    const baseline = listeners(harness)
    for (let cycle = 0; cycle < cycles - 1; cycle++) {
      const agent = await harness.createAgent()
      const result = await agent.run(`question ${cycle}`)
      expect(result.reason).toEqual({ kind: 'completed' })
      await agent.dispose()
    }
    expect(listeners(harness)).toEqual(baseline)
    expect(harness.sessions.list()).toEqual([])
  })

  test('a bad persistence value still fails InvalidOptionsError naming it', async () => {
    for (const value of [true, 0, 'jsonl', null]) {
      const error = await rejectionOf(createHarness({ persistence: value as never }))
      expect(InvalidOptionsError.is(error)).toBe(true)
      expect(error).toMatchObject({ field: 'persistence', value })
    }
  })
})
