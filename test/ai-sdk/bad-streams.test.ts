/**
 * Bad provider streams as typed failures: each part that is not what its specification says ends
 * the call with a `MALFORMED_RESPONSE` naming the part and its id; a stream without `finish` is
 * `STREAM_CLOSED`. Through full turns: the failed turn ends with the typed error, the log stays
 * valid (a resume from JSONL reads it, rebuilt requests match) and the next turn works.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { createAssembler, createHarness, type ModelRequest, type StreamChunk } from 'yoke'
import { fakeIds } from 'yoke/testing'
import { aiSdkModel } from '../../src/ai-sdk/index.js'
import { finish, mockV3, textParts } from './models.js'
import { lookupHarness, lookupTool, useTempDir } from './fixtures.js'

const tempDir = useTempDir('yoke-ai-sdk-bad-')

async function collect(parts: readonly unknown[]): Promise<StreamChunk[]> {
  const signal = new AbortController().signal
  const request: ModelRequest = {
    provider: 'p',
    model: 'm',
    messages: [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
    metadata: { purpose: 'conversation' },
    signal,
  }
  const chunks: StreamChunk[] = []
  for await (const chunk of aiSdkModel(mockV3([parts])).stream(request, { signal })) chunks.push(chunk)
  return chunks
}

const providerCall = {
  type: 'tool-call',
  toolCallId: 'srv',
  toolName: 'web_search',
  input: '{}',
  providerExecuted: true,
}
const result = { type: 'tool-result', toolCallId: 'srv', toolName: 'web_search', result: { hits: 1 } }

const malformed: readonly [string, readonly unknown[], string][] = [
  ['a tool-result without a toolCallId', [{ ...result, toolCallId: undefined }], 'without a toolCallId'],
  ['a tool-result whose result is not JSON', [{ ...result, result: () => 1 }], 'JSON result'],
  [
    'a tool-result for a call Yoke runs',
    [
      { type: 'tool-call', toolCallId: 'mine', toolName: 'lookup', input: '{}' },
      { ...result, toolCallId: 'mine' },
    ],
    'tool call id "mine", which Yoke runs itself',
  ],
  ['a tool-result sent twice', [providerCall, result, result], 'tool call id "srv" twice'],
  ['a provider tool call sent twice', [providerCall, providerCall], 'tool call id "srv" twice'],
  [
    'a provider tool call with the id of a call Yoke runs',
    [{ type: 'tool-call', toolCallId: 'srv', toolName: 'lookup', input: '{}' }, providerCall],
    'tool call id "srv" twice',
  ],
  [
    "a call streamed as Yoke's that turns provider-executed",
    [{ type: 'tool-input-start', id: 'srv', toolName: 'lookup' }, providerCall],
    'as provider-executed after streaming it as a call Yoke runs',
  ],
  [
    'a provider tool input started twice',
    [
      { type: 'tool-input-start', id: 'srv', toolName: 'web_search', providerExecuted: true },
      { type: 'tool-input-start', id: 'srv', toolName: 'web_search' },
    ],
    'tool input id "srv" twice',
  ],
  [
    'a provider tool input without a toolName',
    [{ type: 'tool-input-start', id: 'srv', providerExecuted: true }],
    'without an id or a toolName',
  ],
  ['a file without a mediaType', [{ type: 'file', data: 'AQID' }], 'without a mediaType'],
  ['a file whose data is a number', [{ type: 'file', mediaType: 'image/png', data: 7 }], 'neither bytes nor a URL'],
  [
    'a v4 file whose tagged data is neither data nor url',
    [{ type: 'file', mediaType: 'image/png', data: { type: 'mystery' } }],
    'neither bytes nor a URL',
  ],
  ['a custom part without a kind', [{ type: 'custom' }], 'custom part without a kind'],
  ['a source that is not JSON', [{ type: 'source', sourceType: 'url', id: 's', url: 1n }], 'not JSON'],
  ['a delta for a text part never started', [{ type: 'text-delta', id: 'ghost', delta: 'x' }], '"ghost"'],
  [
    'a text part started twice',
    [
      { type: 'text-start', id: 'a' },
      { type: 'text-start', id: 'a' },
    ],
    'text part id "a" twice',
  ],
]

describe('malformed parts', () => {
  test.each(malformed)('%s is a MALFORMED_RESPONSE naming it', async (_name, parts, words) => {
    const chunks = await collect([...parts, finish('stop')])
    const last = chunks.at(-1)
    expect(last).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'MALFORMED_RESPONSE' } })
    expect((last as { failure: { message: string } }).failure.message).toContain(words)
    const assembler = createAssembler()
    for (const chunk of chunks) assembler.push(chunk)
    expect(assembler.outcome()).toMatchObject({ kind: 'failure', failure: { code: 'MALFORMED_RESPONSE' } })
  })

  test('a provider tool call whose input is not JSON is kept as written and goes back as that text', async () => {
    const model = mockV3([[{ ...providerCall, input: '{oops' }, ...textParts('searched').slice(1)], textParts('next')])
    const harness = await createHarness({ model: aiSdkModel(model), ids: fakeIds() })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect((await agent.run('go')).reason).toMatchObject({ kind: 'completed' })
    await agent.run('again')
    expect(model.doStreamCalls[1]?.prompt[1]).toMatchObject({
      content: [{ type: 'tool-call', toolCallId: 'srv', input: '{oops', providerExecuted: true }, { type: 'text' }],
    })
    await harness.close()
  })
})

/** Bad first answers, each followed by a good one; retries off so the bad one is seen. */
const badTurns: readonly [string, readonly unknown[], string][] = [
  ['a stream that ends without finish', textParts('half').slice(0, 3), 'STREAM_CLOSED'],
  [
    'a delta for a part id never started',
    [{ type: 'text-delta', id: 'ghost', delta: 'x' }, finish('stop')],
    'MALFORMED_RESPONSE',
  ],
  [
    'a tool-result for a call Yoke runs',
    [
      { type: 'tool-call', toolCallId: 'mine', toolName: 'lookup', input: '{"q":"a"}' },
      { ...result, toolCallId: 'mine' },
      finish('tool-calls'),
    ],
    'MALFORMED_RESPONSE',
  ],
]

describe('bad streams in a turn', () => {
  test.each(badTurns)(
    '%s fails the turn with %s; the log resumes and the next turn works',
    async (_name, parts, code) => {
      const first = mockV3([parts])
      const harness = await createHarness({
        model: { adapter: aiSdkModel(first), retry: { maxRetries: 0 } },
        tools: [lookupTool],
        ids: fakeIds(),
        persistence: { dir: tempDir() },
      })
      const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
      const failed = await agent.run('one')
      expect(failed.reason).toMatchObject({ kind: 'error' })
      expect(JSON.stringify(failed.reason)).toContain(code)
      // Yoke ran nothing from the bad answer.
      expect(agent.session.events.filter((event) => event.type === 'tool/call')).toEqual([])
      const id = agent.id
      await harness.close()

      const second = mockV3([textParts('fine now')])
      const again = await lookupHarness(second, tempDir())
      const resumed = await again.resumeAgent(id, { options: { verifyReconstruction: true } })
      const next = await resumed.run('two')
      expect(next).toMatchObject({ reason: { kind: 'completed' }, text: 'fine now' })
      // The failed answer left no assistant message: the provider sees both user turns only.
      expect(second.doStreamCalls[0]?.prompt.map((message) => message.role)).toEqual(['user', 'user'])
      await again.close()
    },
  )
})
