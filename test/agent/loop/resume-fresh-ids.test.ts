/**
 * A deterministic id source restarts with every process: a second harness with its own
 * `fakeIds()` draws `m1`, `m2`, … again, ids the stored log already holds. Resuming (or forking)
 * must still work (tests use `fakeClock()` and `fakeIds()`): the agent skips
 * message ids its session already used.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, type Harness } from 'yoke'
import { fakeClock, fakeIds, type ScriptEntry, scriptedModel, text, tool } from 'yoke/testing'
import { recordingLogger } from '../../helpers/recording-logger.js'

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up',
  input: z.object({ q: z.string() }),
  execute: ({ q }) => `found ${q}`,
})

let dir: string
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-fresh-ids-'))
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  await rm(dir, { recursive: true, force: true })
})

/** A harness of its own: its own fake clock and its own fresh `fakeIds()`, as a new process has. */
async function process(script: ScriptEntry[]): Promise<Harness> {
  const harness = await createHarness({
    persistence: { dir },
    model: scriptedModel(script),
    tools: [lookup],
    clock: fakeClock({ now: 0 }),
    ids: fakeIds(),
    logger: recordingLogger(),
  })
  harnesses.push(harness)
  return harness
}

const messageIds = (harness: Harness, id: string): string[] =>
  harness.sessions
    .get(id)
    ?.deriveMessages()
    .map((message) => message.id) ?? []

describe('a second process with a fresh fakeIds()', () => {
  test('resumes a session and runs the next turn, tool results included', async () => {
    const first = await process([tool('lookup', { q: 'a' }), text('one')])
    const agent = await first.createAgent({ sessionId: 's1', options: { verifyReconstruction: true } })
    expect((await agent.run('first')).reason.kind).toBe('completed')
    await first.close()

    const second = await process([tool('lookup', { q: 'b' }), text('two')])
    const resumed = await second.resumeAgent('s1', { options: { verifyReconstruction: true } })
    const result = await resumed.run('second')
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'two' })
    const ids = messageIds(second, 's1')
    expect(ids).toHaveLength(8)
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('continues a fork of a stored session', async () => {
    const first = await process([text('one')])
    await (await first.createAgent({ sessionId: 's1', options: { verifyReconstruction: true } })).run('first')
    await first.close()

    const second = await process([text('forked')])
    const child = await second.resumeAgent((await second.fork('s1', { id: 'child' })).id, {
      options: { verifyReconstruction: true },
    })
    const result = await child.run('and then?')
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'forked' })
    const ids = messageIds(second, 'child')
    expect(new Set(ids).size).toBe(ids.length)
  })
})
