/**
 * Provider metadata round-trip: what a provider puts on stream parts (a reasoning signature, a
 * thought signature on a tool call) is stored in the log and sent back as `providerOptions` on the
 * next request, live, after a JSONL resume, in a fork, and in a rebuilt request.
 *
 * @module
 */
import { expect, test } from 'vitest'
import { createHarness, rebuildRequest } from 'yoke'
import { fakeIds } from 'yoke/testing'
import { aiSdkModel } from '../../src/ai-sdk/index.js'
import { finish, mockV3, textParts } from './models.js'
import { lookupHarness, useTempDir } from './fixtures.js'

const tempDir = useTempDir('yoke-ai-sdk-meta-')

/** A first answer the way Anthropic- and Gemini-style providers stream signed reasoning and a signed tool call. */
const signedToolStep = [
  { type: 'reasoning-start', id: 'r' },
  { type: 'reasoning-delta', id: 'r', delta: 'I should look it up.' },
  // The signature arrives last, on an empty delta.
  { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: { anthropic: { signature: 'sig-1' } } },
  { type: 'reasoning-end', id: 'r' },
  // An empty text block: dropped from the message, so it takes no position.
  { type: 'text-start', id: 'empty', providerMetadata: { x: { y: 1 } } },
  { type: 'text-end', id: 'empty' },
  { type: 'tool-input-start', id: 'call-1', toolName: 'lookup' },
  { type: 'tool-input-delta', id: 'call-1', delta: '{"q":"yoke"}' },
  { type: 'tool-input-end', id: 'call-1' },
  {
    type: 'tool-call',
    toolCallId: 'call-1',
    toolName: 'lookup',
    input: '{"q":"yoke"}',
    providerMetadata: { google: { thoughtSignature: 'thought-1' } },
  },
  { ...finish('tool-calls', 'tool_use'), providerMetadata: { anthropic: { cacheCreationInputTokens: 7 } } },
]

const signedAssistant = {
  role: 'assistant',
  content: [
    { type: 'reasoning', text: 'I should look it up.', providerOptions: { anthropic: { signature: 'sig-1' } } },
    {
      type: 'tool-call',
      toolCallId: 'call-1',
      toolName: 'lookup',
      input: { q: 'yoke' },
      providerOptions: { google: { thoughtSignature: 'thought-1' } },
    },
  ],
}

test('signatures go back to the provider live, after a resume, in a fork and in a rebuilt request', async () => {
  const live = mockV3([signedToolStep, textParts('It means a harness.')])
  const harness = await lookupHarness(live, tempDir(), { ids: fakeIds() })
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  await agent.run('look up yoke')
  expect(live.doStreamCalls[1]?.prompt[1]).toEqual(signedAssistant)

  // The log holds the metadata on the assistant message, the finish part's too.
  const message = agent.session.events.find((event) => event.type === 'assistant/message')
  expect((message?.data as { message: { source: unknown } } | undefined)?.message.source).toMatchObject({
    replayState: {
      aiSdk: {
        parts: [
          { type: 'reasoning', providerMetadata: { anthropic: { signature: 'sig-1' } } },
          { type: 'tool-call', providerMetadata: { google: { thoughtSignature: 'thought-1' } } },
        ],
        finish: { anthropic: { cacheCreationInputTokens: 7 } },
      },
    },
  })
  const id = agent.id
  await harness.close()

  const resumedModel = mockV3([textParts('Again.')])
  const again = await lookupHarness(resumedModel, tempDir())
  const resumed = await again.resumeAgent(id)
  await resumed.run('and again?')
  expect(resumedModel.doStreamCalls[0]?.prompt[1]).toEqual(signedAssistant)
  // A rebuilt request carries the same replay state, so a provider would get the same options.
  const rebuilt = rebuildRequest(resumed.session, { turn: 1, step: 2 })
  expect(rebuilt.messages[1]).toMatchObject({ source: { replayState: { aiSdk: { parts: expect.any(Array) } } } })

  const child = await again.fork(id)
  const forkModel = mockV3([textParts('Forked.')])
  await again.close()
  const third = await lookupHarness(forkModel, tempDir())
  const forked = await third.resumeAgent(child.id)
  await forked.run('from the fork')
  expect(forkModel.doStreamCalls[0]?.prompt[1]).toEqual(signedAssistant)
  await third.close()
})

test('a message without metadata has no replay state and sends no providerOptions', async () => {
  const model = mockV3([textParts('one'), textParts('two')])
  const harness = await createHarness({ model: aiSdkModel(model), ids: fakeIds() })
  const agent = await harness.createAgent()
  await agent.run('a')
  await agent.run('b')
  expect(model.doStreamCalls[1]?.prompt[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'one' }] })
  const message = agent.session.events.find((event) => event.type === 'assistant/message')
  expect((message?.data as { message: { source: object } } | undefined)?.message.source).not.toHaveProperty(
    'replayState',
  )
  await harness.close()
})

test('replay state whose entry type does not match the block is never sent', async () => {
  const model = mockV3([textParts('x')])
  const adapter = aiSdkModel(model)
  const signal = new AbortController().signal
  const request = {
    provider: 'p',
    model: 'm',
    metadata: { purpose: 'conversation' as const },
    signal,
    messages: [
      {
        id: 'a1',
        role: 'assistant' as const,
        content: [{ type: 'text' as const, text: 'hi' }],
        source: {
          kind: 'model' as const,
          provider: 'p',
          model: 'm',
          replayState: { aiSdk: { parts: [{ type: 'reasoning', providerMetadata: { a: { b: 1 } } }] } },
        },
      },
      {
        id: 'u1',
        role: 'user' as const,
        content: [{ type: 'text' as const, text: 'go' }],
        source: { kind: 'user' as const },
      },
    ],
  }
  for await (const _chunk of adapter.stream(request, { signal })) {
    // drain
  }
  expect(model.doStreamCalls[0]?.prompt[0]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'hi' }] })
})
