/**
 * `aiSdkModel` through full agent turns: a tool call and its result with the AI SDK's own v3 mock,
 * a hand-built v2 and a hand-built v4 model; what the provider is sent (prompt, tools, tool choice,
 * response format); over memory and JSONL, with a resume between turns and rebuilt requests.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { createHarness, type HarnessOptions, rebuildRequest } from 'yoke'
import { fakeClock, fakeIds } from 'yoke/testing'
import { z } from 'zod'
import { aiSdkModel } from '../../src/ai-sdk/index.js'
import { finish, mockV2, mockV3, scriptedAiSdkModel, textParts, toolParts } from './models.js'
import { lookupTool, useTempDir } from './fixtures.js'

const tempDir = useTempDir('yoke-ai-sdk-')

const stores: readonly [string, () => Partial<HarnessOptions>][] = [
  ['memory', () => ({})],
  ['jsonl', () => ({ persistence: { dir: tempDir() } })],
]

/** The prompt a provider got on its second call: the whole first step, tool result included. */
const secondPrompt = [
  { role: 'system', content: expect.any(String) },
  { role: 'user', content: [{ type: 'text', text: 'look up yoke' }] },
  {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: { q: 'yoke' } }],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'call-1', toolName: 'lookup', output: { type: 'text', value: 'found yoke' } },
    ],
  },
]

describe.each(stores)('full turns over %s', (_name, store) => {
  const versions = [
    [
      'v3 (MockLanguageModelV3 from ai/test)',
      () => mockV3([toolParts('call-1', 'lookup', '{"q":"yoke"}'), textParts('It means a harness.')]),
    ],
    [
      'v2 (MockLanguageModelV2 from ai 5 ai/test)',
      () => mockV2([toolParts('call-1', 'lookup', '{"q":"yoke"}', 'v2'), textParts('It means a harness.', 'v2')]),
    ],
    [
      'v2 (hand-built)',
      () =>
        scriptedAiSdkModel('v2', [
          toolParts('call-1', 'lookup', '{"q":"yoke"}', 'v2'),
          textParts('It means a harness.', 'v2'),
        ]),
    ],
    [
      'v4 (hand-built)',
      () =>
        scriptedAiSdkModel('v4', [
          toolParts('call-1', 'lookup', '{"q":"yoke"}', 'v4'),
          textParts('It means a harness.', 'v4'),
        ]),
    ],
  ] as const

  test.each(versions)('%s: the model calls a tool, Yoke runs it and the model answers', async (_version, make) => {
    const model = make()
    const calls = 'doStreamCalls' in model ? model.doStreamCalls : model.calls
    const harness = await createHarness({
      model: aiSdkModel(model),
      tools: [lookupTool],
      clock: fakeClock(),
      ids: fakeIds(),
      instructions: 'You are terse.',
      ...store(),
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const result = await agent.run('look up yoke')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'It means a harness.' })
    expect(agent.session.events.filter((event) => event.type === 'tool/result')).toHaveLength(1)
    expect(calls).toHaveLength(2)
    expect(calls[0]).toMatchObject({
      tools: [{ type: 'function', name: 'lookup', description: 'Looks a word up.', inputSchema: expect.any(Object) }],
    })
    expect(calls[1]?.prompt).toEqual(secondPrompt)
    // The usage of every call is in the log, cache reads and reasoning included.
    const messages = agent.session.events.filter((event) => event.type === 'assistant/message')
    expect(messages.map((event) => (event.data as { usage?: unknown }).usage)).toEqual([
      expect.objectContaining({ inputTokens: 60, outputTokens: 50, reasoningTokens: 30 }),
      expect.objectContaining({ inputTokens: 60, outputTokens: 50, reasoningTokens: 30 }),
    ])
    await harness.close()
  })

  test('a resume between turns sends the whole history to the provider, and rebuilt requests match', async () => {
    const first = mockV3([toolParts('call-1', 'lookup', '{"q":"yoke"}'), textParts('It means a harness.')])
    const harness = await createHarness({ model: aiSdkModel(first), tools: [lookupTool], ids: fakeIds(), ...store() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    await agent.run('look up yoke')
    const id = agent.id
    await harness.close()
    if (store().persistence === undefined) return
    const second = mockV3([textParts('Still a harness.')])
    const again = await createHarness({ model: aiSdkModel(second), tools: [lookupTool], ...store() })
    const resumed = await again.resumeAgent(id)
    const result = await resumed.run('and again?')
    expect(result.text).toBe('Still a harness.')
    const prompt = second.doStreamCalls[0]?.prompt
    // No instructions on either harness: the prompt is the logged history, then the new input.
    expect(prompt).toEqual([
      ...secondPrompt.slice(1),
      { role: 'assistant', content: [{ type: 'text', text: 'It means a harness.' }] },
      { role: 'user', content: [{ type: 'text', text: 'and again?' }] },
    ])
    const rebuilt = rebuildRequest(resumed.session, { turn: 2, step: 1 })
    expect(rebuilt.messages).toHaveLength(5)
    await again.close()
  })
})

describe('call options', () => {
  test('structured output is sent as responseFormat json with the schema, and the answer parses', async () => {
    const model = mockV3([textParts('{"city":"Lyon"}')])
    const harness = await createHarness({ model: aiSdkModel(model), ids: fakeIds() })
    const agent = await harness.createAgent()
    const result = await agent.run('where?', { output: z.object({ city: z.string() }) })
    expect(result.output).toEqual({ city: 'Lyon' })
    expect(model.doStreamCalls[0]?.responseFormat).toMatchObject({
      type: 'json',
      name: 'output',
      schema: { type: 'object', properties: { city: { type: 'string' } } },
    })
    // The adapter gives the format to the provider itself: no instruction is appended to system.
    const system = model.doStreamCalls[0]?.prompt.find((message) => message.role === 'system')
    expect(system?.content ?? '').not.toContain('JSON')
    await harness.close()
  })

  test("the last allowed step's toolChoice 'none' reaches the provider", async () => {
    const model = mockV3([toolParts('call-1', 'lookup', '{"q":"a"}'), textParts('done')])
    const harness = await createHarness({ model: aiSdkModel(model), tools: [lookupTool], ids: fakeIds() })
    const agent = await harness.createAgent({ options: { maxSteps: 2 } })
    await agent.run('go')
    expect(model.doStreamCalls.map((call) => call.toolChoice)).toEqual([undefined, { type: 'none' }])
    await harness.close()
  })
})

describe('bad provider streams in a turn', () => {
  test('a tool call with invalid JSON input is answered with a tool error and the loop goes on', async () => {
    const model = mockV3([
      [{ type: 'tool-call', toolCallId: 'bad', toolName: 'lookup', input: '{not json' }, finish('tool-calls')],
      textParts('sorry'),
    ])
    const harness = await createHarness({ model: aiSdkModel(model), tools: [lookupTool], ids: fakeIds() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const result = await agent.run('go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'sorry' })
    const toolMessage = model.doStreamCalls[1]?.prompt.at(-1)
    expect(toolMessage).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'bad', output: { type: 'error-text' } }],
    })
    // The logged call keeps the arguments as written, and goes back to the provider as that text.
    expect(model.doStreamCalls[1]?.prompt.at(-2)).toMatchObject({
      content: [{ type: 'tool-call', input: '{not json' }],
    })
    await harness.close()
  })

  test('a stream that repeats a part id fails the turn with a typed error; the next turn works', async () => {
    const model = mockV3([
      [{ type: 'text-start', id: 'a' }, { type: 'text-end', id: 'a' }, { type: 'text-start', id: 'a' }, finish('stop')],
      textParts('fine now'),
    ])
    const harness = await createHarness({
      model: { adapter: aiSdkModel(model), retry: { maxRetries: 0 } },
      ids: fakeIds(),
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    const failed = await agent.run('one')
    expect(failed.reason).toMatchObject({ kind: 'error' })
    expect(JSON.stringify(failed.reason)).toContain('MALFORMED_RESPONSE')
    const next = await agent.run('two')
    expect(next).toMatchObject({ reason: { kind: 'completed' }, text: 'fine now' })
    await harness.close()
  })
})
