/**
 * Tools return any JSON, through a real agent turn (scripted model, `verifyReconstruction: true`)
 * over the memory and JSONL stores: the model sees the JSON text, a `toolResult()` keeps its rich
 * fields, and a value that is not JSON fails only its call — the turn goes on and the log stays
 * rebuildable.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  createHarness,
  defineTool,
  type Harness,
  type ModelRequest,
  rebuildRequest,
  type ToolDefinition,
  toolResult,
} from 'yoke'
import { call, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { calls, eventsOf, loopWorld, requestToolResults, turnEnds } from './loop-helpers.js'

const rows = [
  { id: 1, name: 'Ada', tags: ['admin'] },
  { id: 2, name: 'Linus', tags: [] },
]

const query = defineTool({
  name: 'query',
  description: 'Run a query',
  input: z.object({ table: z.string() }),
  execute: async ({ table }) => ({ table, rows, total: rows.length }),
})

/** A sent request as `rebuildRequest` returns it: everything but its signal. */
function withoutSignal(request: ModelRequest | undefined): Omit<ModelRequest, 'signal'> {
  if (request === undefined) throw new Error('no such request')
  const { signal: _signal, ...rest } = request
  return rest
}

function constant(name: string, value: () => unknown): ToolDefinition {
  return defineTool({ name, description: `returns ${name}`, input: z.object({}), execute: () => value() as never })
}

describe('JSON tool results through the loop (memory)', () => {
  test('object, array, number, boolean, null and string returns reach the model as their JSON text (a string as text)', async () => {
    const tools = [
      query,
      constant('list', () => [1, 'two', { three: 3 }]),
      constant('count', () => 7),
      constant('flag', () => true),
      constant('nothing', () => null),
      constant('greeting', () => 'hello "world"'),
    ]
    const { agent, model } = await loopWorld(
      [
        calls(
          ['c1', 'query', '{"table":"users"}'],
          ['c2', 'list'],
          ['c3', 'count'],
          ['c4', 'flag'],
          ['c5', 'nothing'],
          ['c6', 'greeting'],
        ),
        text('done'),
      ],
      { tools },
    )
    const result = await agent.run('go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'done' })
    expect(requestToolResults(model.requests[1])).toEqual([
      `c1: ${JSON.stringify({ table: 'users', rows, total: 2 })}`,
      'c2: [1,"two",{"three":3}]',
      'c3: 7',
      'c4: true',
      'c5: null',
      'c6: hello "world"',
    ])
    for (const event of eventsOf(agent, 'tool/result'))
      expect((event.data as { error?: unknown }).error).toBeUndefined()
    expect(rebuildRequest(agent.session, { turn: 1, step: 2 })).toEqual(withoutSignal(model.requests[1]))
  })

  test('toolResult() keeps every rich field: blocks, isError, meta, concludesTurn, additionalContexts', async () => {
    const image = { type: 'image', mediaType: 'image/png', uri: 'https://example.test/chart.png' } as const
    const tools = [
      constant('chart', () =>
        toolResult({
          content: [{ type: 'text', text: 'the chart' }, image],
          meta: { points: 3 },
          additionalContexts: ['look'],
        }),
      ),
      constant('broken', () => toolResult({ content: 'no such table', isError: true })),
    ]
    const { agent, model } = await loopWorld([calls(['c1', 'chart'], ['c2', 'broken']), text('seen')], { tools })
    expect((await agent.run('go')).reason).toEqual({ kind: 'completed' })
    expect(requestToolResults(model.requests[1])).toEqual(['c1: the chart[image]', 'c2 error: no such table'])
    const [chart, broken] = eventsOf(agent, 'tool/result').map((event) => event.data as Record<string, unknown>)
    expect(chart?.['meta']).toEqual({ points: 3 })
    expect(broken?.['error']).toEqual({ name: 'ToolFailedError', code: 'TOOL_FAILED' })
    const userTexts = model.requests[1]?.messages
      .filter((message) => message.role === 'user' && message.source.kind !== 'tool')
      .map((message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''))
    expect(userTexts).toEqual(['go', 'look'])
  })

  test('a concluding toolResult() ends the turn; the same fields as a plain object are JSON and do not', async () => {
    const concluding = await loopWorld([call('c1', 'finish', '{}')], {
      tools: [constant('finish', () => toolResult({ content: 'finished', concludesTurn: true }))],
    })
    expect((await concluding.agent.run('go')).reason).toEqual({ kind: 'completed' })
    expect(concluding.model.requests).toHaveLength(1)

    const plain = await loopWorld([call('c1', 'finish', '{}'), text('went on')], {
      tools: [constant('finish', () => ({ content: 'finished', concludesTurn: true }))],
    })
    expect((await plain.agent.run('go')).text).toBe('went on')
    expect(requestToolResults(plain.model.requests[1])).toEqual(['c1: {"content":"finished","concludesTurn":true}'])
  })

  test.each([
    [
      'a cycle',
      () => {
        const node: Record<string, unknown> = { id: 1 }
        node['self'] = node
        return { node }
      },
      'node.self is a cycle (it contains itself)',
    ],
    ['a function', () => ({ rows: [{ format: () => 'x' }] }), 'rows[0].format is a function'],
    ['a bigint', () => ({ total: 2n }), 'total is a bigint'],
    [
      'a Date',
      () => ({ rows: [{}, {}, { when: new Date(0) }] }),
      'rows[2].when is a Date instance, not a plain object',
    ],
    ['a Map', () => new Map([[1, 2]]), 'the value is a Map instance, not a plain object'],
    ['undefined in an array', () => [1, undefined, 3], '[1] is undefined'],
    ['a non-finite number', () => ({ ratio: Number.POSITIVE_INFINITY }), 'ratio is a non-finite number (Infinity)'],
  ])(
    'a return holding %s is TOOL_FAILED naming the path; the model sees it and the turn goes on',
    async (_label, value, problem) => {
      const { agent, model } = await loopWorld([call('c1', 'bad', '{}'), text('recovered')], {
        tools: [constant('bad', value)],
      })
      const result = await agent.run('go')
      expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'recovered' })
      expect(requestToolResults(model.requests[1])).toEqual([
        `c1 error: Tool error (TOOL_FAILED): "bad" returned a value that is not JSON: ${problem}`,
      ])
      expect(eventsOf(agent, 'tool/result').map((event) => (event.data as { error?: unknown }).error)).toEqual([
        { name: 'ToolFailedError', code: 'TOOL_FAILED' },
      ])
      expect(turnEnds(agent)).toEqual([{ turn: 1, reason: { kind: 'completed' } }])
      expect(rebuildRequest(agent.session, { turn: 1, step: 2 })).toEqual(withoutSignal(model.requests[1]))
    },
  )

  test('toolResult() with a bad field fails the call with TOOL_FAILED naming it', async () => {
    const { agent, model } = await loopWorld([call('c1', 'bad', '{}'), text('ok')], {
      tools: [constant('bad', () => toolResult({ content: [{ type: 'reasoning', text: 'x' }] as never }))],
    })
    expect((await agent.run('go')).reason).toEqual({ kind: 'completed' })
    expect(requestToolResults(model.requests[1])).toEqual([
      'c1 error: Tool error (TOOL_FAILED): invalid result: content[0] is a "reasoning" block; only text and image blocks are allowed',
    ])
  })
})

describe('JSON tool results over JSONL', () => {
  let dir: string | undefined
  const harnesses: Harness[] = []

  afterEach(async () => {
    for (const harness of harnesses.splice(0)) await harness.close()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
    dir = undefined
  })

  test('a JSON result and a refused one are stored, read back after a restart, and rebuild the request exactly', async () => {
    dir = await mkdtemp(join(tmpdir(), 'yoke-json-tools-'))
    const ids = fakeIds()
    const cyclic = constant('cyclic', () => {
      const list: unknown[] = []
      list.push(list)
      return list
    })
    const model = scriptedModel([calls(['c1', 'query', '{"table":"users"}'], ['c2', 'cyclic']), text('done')])
    const first = await createHarness({ persistence: { dir }, model, clock: fakeClock(), ids, tools: [query, cyclic] })
    harnesses.push(first)
    const agent = await first.createAgent({ sessionId: 'json-tools', options: { verifyReconstruction: true } })
    expect((await agent.run('go')).reason).toEqual({ kind: 'completed' })
    const sent = model.requests[1]
    expect(requestToolResults(sent)).toEqual([
      `c1: ${JSON.stringify({ table: 'users', rows, total: 2 })}`,
      'c2 error: Tool error (TOOL_FAILED): "cyclic" returned a value that is not JSON: [0] is a cycle (it contains itself)',
    ])
    await first.close()

    const second = await createHarness({ persistence: { dir }, model: scriptedModel([]), clock: fakeClock(), ids })
    harnesses.push(second)
    const resumed = await second.resumeAgent('json-tools')
    expect(rebuildRequest(resumed.session, { turn: 1, step: 2 })).toEqual(withoutSignal(sent))
  })
})
