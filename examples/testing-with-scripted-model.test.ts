/**
 * Testing an agent without a network: a vitest file you can copy. `scriptedModel`
 * answers each request with the next reply of its script and records every request; `fakeClock`
 * replaces time (timers fire only when the test says so); `fakeIds` makes ids `s1`, `m1`, … So
 * a test can assert the exact event sequence of a turn, and the same test always sees the same log.
 *
 * `npm test` runs this file (vitest's `include` has `examples/**\/*.test.ts`);
 * `npm run example -- testing-with-scripted-model` runs just this file.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, type Harness, type SessionEvent } from 'yoke'
import { fail, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'

const harnesses: Harness[] = []
afterEach(async () => {
  // Close every harness: it stops timers and listeners, so nothing leaks into the next test.
  for (const harness of harnesses.splice(0)) await harness.close()
})

/** The event types of a log, with the model's streamed `assistant/chunk`s folded into one `…chunks`. */
function typesOf(events: readonly SessionEvent[]): string[] {
  return events
    .map((event) => (event.type === 'assistant/chunk' ? '…chunks' : event.type))
    .filter((type, index, all) => type !== '…chunks' || all[index - 1] !== '…chunks')
}

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
})

test('a turn with one tool call logs exactly this sequence of events', async () => {
  const model = scriptedModel([
    { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }] },
    text('2 + 3 = 5'),
  ])
  const harness = await createHarness({ model, tools: [add], clock: fakeClock({ now: 0 }), ids: fakeIds() })
  harnesses.push(harness)
  const agent = await harness.createAgent()

  const result = await agent.run('What is 2 + 3?')

  expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: '2 + 3 = 5' })
  expect(agent.id).toBe('s1') // fakeIds: the first session is s1
  expect(typesOf(agent.session.events)).toEqual([
    'agent/inbox/spliced', // the user message leaves the inbox…
    'turn/start',
    'agent/inbox/spliced', // …and is claimed by turn 1
    'step/start',
    'user/message',
    'request/header', // what the model is asked: tools, system prompt, options
    'request/context',
    '…chunks', // the streamed reply
    'assistant/message', // step 1's answer: one tool call
    'tool/call',
    'tool/result',
    'step/end',
    'step/start', // step 2 sends the result back
    '…chunks',
    'assistant/message',
    'step/end',
    'turn/end',
  ])
  // Every event carries the fake clock's time, so the log is byte-identical from run to run.
  expect(new Set(agent.session.events.map((event) => event.time))).toEqual(new Set([0]))
  // The model saw the tool's result in its second request.
  expect(model.requests).toHaveLength(2)
  expect(model.requests[1]?.messages.at(-1)?.content).toEqual([
    { type: 'tool-result', toolCallId: 'c1', isError: false, content: [{ type: 'text', text: '5' }] },
  ])
})

test('a rate-limited request is retried after the backoff, which the fake clock controls', async () => {
  const clock = fakeClock({ now: 0 })
  const model = scriptedModel([fail('RATE_LIMIT'), text('recovered')])
  // jitter 0 makes the backoff exact (500 ms before the first retry).
  const harness = await createHarness({
    model,
    clock,
    ids: fakeIds(),
    patches: [{ id: 'retry', merge: { jitter: 0 } }],
  })
  harnesses.push(harness)
  const agent = await harness.createAgent()

  const pending = agent.run('hello')
  // The failure is logged as `llm/retry` with the backoff; then nothing happens until the clock moves.
  const retry = () => agent.session.events.find((event) => event.type === 'llm/retry')
  while (retry() === undefined) await new Promise((resolve) => setImmediate(resolve))
  expect(retry()?.data).toMatchObject({ turn: 1, attempt: 1, delayMs: 500 })
  await clock.advance(499)
  expect(model.requests).toHaveLength(1) // 1 ms early: still waiting
  await clock.advance(1)
  const result = await pending

  expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'recovered' })
  expect(model.requests).toHaveLength(2)
  expect(typesOf(agent.session.events)).toEqual([
    'agent/inbox/spliced',
    'turn/start',
    'agent/inbox/spliced',
    'step/start',
    'user/message',
    'request/header',
    'request/context',
    '…chunks', // the failed attempt's stream: its error finish
    'llm/retry', // the backoff starts (attempt 1, 500 ms)…
    'llm/retry-started', // …and ends when the clock reaches it
    '…chunks', // the second attempt
    'assistant/message', // one answer for the step, whatever the attempts
    'step/end',
    'turn/end',
  ])
})
