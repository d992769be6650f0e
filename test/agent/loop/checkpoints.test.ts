/**
 * Durability checkpoints through the agent loop: a
 * failing flush before the model request or before a tool body fails closed.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, ErrorCode, type Harness, memoryPersistence } from 'yoke'
import { call, fakeClock, fakeIds, faultyPersistence, scriptedModel, text } from 'yoke/testing'
import { recordingLogger } from '../../helpers/recording-logger.js'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close().catch(() => {})
  harness = undefined
})

test('every append failing — the model gets 0 requests and the turn ends error with the flush failure', async () => {
  const model = scriptedModel([text('never sent')])
  const adapter = faultyPersistence(memoryPersistence(), {
    fail: (entry) => (entry.method === 'append' ? new Error('disk full') : undefined),
  })
  harness = await createHarness({
    model,
    persistence: adapter,
    clock: fakeClock({ now: 0 }),
    ids: fakeIds(),
    logger: recordingLogger(),
  })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  // The turn ends error (the flush before the request failed); its turn-end checkpoint fails too, so run() rejects with that flush error.
  const error = await agent.run('hi').then(
    () => undefined,
    (rejection: unknown) => rejection,
  )
  expect(error).toMatchObject({ code: ErrorCode.FLUSH_FAILED, cause: { code: ErrorCode.WRITE_FAILED } })
  expect(model.requests).toHaveLength(0)
  const end = agent.session.events.at(-1)
  expect(end?.data).toMatchObject({ reason: { kind: 'error' } })
  expect(end?.type).toBe('turn/end')
  expect(JSON.stringify(end?.data)).toContain('FLUSH_FAILED')
})

test('a tool call whose flush before the body fails — its body runs 0 times and its tool/result is an error', async () => {
  let bodies = 0
  const echo = defineTool({
    name: 'echo',
    description: 'Echo',
    input: z.object({ text: z.string() }),
    execute: ({ text: said }) => {
      bodies++
      return said
    },
  })
  const model = scriptedModel([call('c1', 'echo', '{"text":"ping"}'), text('done')])
  let failing = false
  const adapter = faultyPersistence(memoryPersistence(), {
    fail: (entry) => (failing && entry.method === 'append' ? new Error('disk full') : undefined),
  })
  harness = await createHarness({
    model,
    persistence: adapter,
    tools: [echo],
    clock: fakeClock({ now: 0 }),
    ids: fakeIds(),
    logger: recordingLogger(),
  })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  harness.on('session/event', ({ event }) => {
    if (event.type === 'tool/call') failing = true
  })
  await agent.run('go').catch(() => undefined)
  expect(bodies).toBe(0)
  const result = agent.session.events.find((event) => event.type === 'tool/result')
  expect(result).toBeDefined()
  expect((result?.data as { error?: { code: string } } | undefined)?.error?.code).toBe('TOOL_FAILED')
})
