import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, isSessionId } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'

let dir: string
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-long-id-'))
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  await rm(dir, { recursive: true, force: true })
})

async function jsonlHarness(replies: readonly string[], ids: ReturnType<typeof fakeIds>): Promise<Harness> {
  const harness = await createHarness({
    persistence: { dir },
    model: scriptedModel(replies.map((reply) => text(reply))),
    clock: fakeClock(),
    ids,
  })
  harnesses.push(harness)
  return harness
}

/** Session ids at the lengths that used to overflow the agent's context label, up to the longest valid one. */
const longIds = [
  ['59 characters', `u-${'a'.repeat(57)}`],
  ['64 characters', `tenant_${'b'.repeat(57)}`],
  ['128 characters (the longest valid id)', `user.${'c'.repeat(60)}-${'D'.repeat(62)}`],
] as const

describe('every valid session id works as an agent id over JSONL', () => {
  test.each(longIds)('a session id of %s: createAgent, resumeAgent after a restart, openAgent', async (_label, id) => {
    expect(isSessionId(id)).toBe(true)
    const ids = fakeIds()
    const first = await jsonlHarness(['one'], ids)
    const created = await first.createAgent({ sessionId: id })
    expect(created.id).toBe(id)
    expect((await created.run('hi')).reason).toEqual({ kind: 'completed' })
    await first.close()

    const second = await jsonlHarness(['two'], ids)
    const resumed = await second.resumeAgent(id)
    expect(resumed.id).toBe(id)
    expect((await resumed.run('again')).reason).toEqual({ kind: 'completed' })
    await second.close()

    const third = await jsonlHarness(['three'], ids)
    const opened = await third.openAgent(id)
    expect(opened.id).toBe(id)
    expect((await opened.run('once more')).reason).toEqual({ kind: 'completed' })
    const texts = opened.session.events
      .filter((event) => event.type === 'assistant/message')
      .map((event) => (event.data as { message: { content: { text?: string }[] } }).message.content[0]?.text)
    expect(texts).toEqual(['one', 'two', 'three'])
  })

  test('openAgent creates an agent for an unknown 128-character id', async () => {
    const id = 'x'.repeat(128)
    const harness = await jsonlHarness(['fresh'], fakeIds())
    const agent = await harness.openAgent(id)
    expect(agent.id).toBe(id)
    expect((await agent.run('hi')).reason).toEqual({ kind: 'completed' })
  })
})
