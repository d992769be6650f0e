import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { Harness } from 'yoke'
import { fakeIds, text } from 'yoke/testing'
import {
  CHK,
  compactionEvents,
  completeTurns,
  prompt,
  replies,
  reply,
  setup,
  stub,
  texts,
} from './compaction-helpers.js'

let dir: string
const open: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-compaction-'))
})

afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close()
  await rm(dir, { recursive: true, force: true })
})

describe('compacted sessions replay', () => {
  test('a compacted session resumed from JSONL derives the same messages and continues from the checkpoint', async () => {
    const ids = fakeIds()
    const first = await setup({ script: replies(3), compaction: { summarizer: stub('S') }, persistence: { dir }, ids })
    open.push(first.harness)
    const agent = await first.harness.createAgent()
    await completeTurns(agent, 3)
    await agent.compact()
    const messages = agent.session.deriveMessages()
    const id = agent.id
    await first.harness.close()
    open.pop()
    const second = await setup({
      script: [text(reply(4))],
      compaction: { summarizer: stub('T') },
      persistence: { dir },
      ids,
    })
    open.push(second.harness)
    const resumed = await second.harness.resumeAgent(id)
    expect(resumed.session.deriveMessages()).toEqual(messages)
    expect(texts(resumed.session.deriveMessages())).toEqual([CHK('S'), prompt(3), reply(3)])
    await expect(resumed.run(prompt(4))).resolves.toMatchObject({ reason: { kind: 'completed' } })
    expect(texts(second.model.requests[0]?.messages ?? [])).toEqual([CHK('S'), prompt(3), reply(3), prompt(4)])
  })

  test('an unmatched compaction/start in a loaded log does not block a new bracket', async () => {
    const first = await setup({ script: replies(3), compaction: { summarizer: stub('S') }, persistence: { dir } })
    open.push(first.harness)
    const agent = await first.harness.createAgent()
    await completeTurns(agent, 3)
    agent.session.append('compaction/start', { compactionId: 'old', trigger: 'manual', turn: null, step: null })
    const id = agent.id
    await first.harness.close()
    open.pop()
    const second = await setup({ script: [], compaction: { summarizer: stub('S') }, persistence: { dir } })
    open.push(second.harness)
    const resumed = await second.harness.resumeAgent(id)
    const before = resumed.session.length
    await expect(resumed.compact()).resolves.toMatchObject({ kind: 'summary', compactionId: 'c1' })
    const appended = compactionEvents(resumed.session.slice(before))
    expect(appended.map((event) => [event.type, (event.data as { compactionId: string }).compactionId])).toEqual([
      ['compaction/start', 'c1'],
      ['compaction/summary', 'c1'],
      ['compaction/end', 'c1'],
    ])
    expect(texts(resumed.session.deriveMessages())).toEqual([CHK('S'), prompt(3), reply(3)])
  })

  test('a second process with a fresh fakeIds() compacts a compacted session again: the summary id skips the taken c1', async () => {
    const first = await setup({
      script: replies(3),
      compaction: { summarizer: stub('S') },
      persistence: { dir },
      ids: fakeIds(),
    })
    open.push(first.harness)
    const agent = await first.harness.createAgent()
    await completeTurns(agent, 3)
    await expect(agent.compact()).resolves.toMatchObject({ kind: 'summary', compactionId: 'c1' })
    const id = agent.id
    await first.harness.close()
    open.pop()
    const second = await setup({
      script: [text(reply(4))],
      compaction: { summarizer: stub('T') },
      persistence: { dir },
      ids: fakeIds(),
    })
    open.push(second.harness)
    const resumed = await second.harness.resumeAgent(id)
    await expect(resumed.run(prompt(4))).resolves.toMatchObject({ turn: 4, reason: { kind: 'completed' } })
    await expect(resumed.compact()).resolves.toMatchObject({ kind: 'summary', compactionId: 'c2' })
    expect(texts(resumed.session.deriveMessages())[0]).toBe(CHK('T'))
  })
})
