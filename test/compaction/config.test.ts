import { afterEach, describe, expect, test } from 'vitest'
import {
  basicCompaction,
  BasicCompactionPlugin,
  type CompactionEngine,
  createHarness,
  definePlugin,
  type Harness,
  HarnessError,
  installCompactionTriggers,
  InvalidOptionsError,
  type Message,
  modelSummarizer,
  services,
} from 'yoke'
import { heuristicEstimate } from '../../src/compaction/index.js'
import { fail, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { compactionEvents, completeTurns, replies, setup, stub } from './compaction-helpers.js'

let harness: Harness | undefined

afterEach(async () => {
  await harness?.close()
  harness = undefined
})

describe('basicCompaction options', () => {
  test('basicCompaction returns the entry patch of the compaction entry', () => {
    const options = { threshold: 0.5 }
    expect(basicCompaction(options)).toEqual({ id: 'compaction', plugin: BasicCompactionPlugin, config: options })
  })

  test.each([
    [{ threshold: 0 }, 'threshold'],
    [{ threshold: 1.5 }, 'threshold'],
    [{ keepRecentTurns: 0 }, 'keepRecentTurns'],
    [{ keepRecentTurns: 1.5 }, 'keepRecentTurns'],
    [{ maxOverflowRetries: -1 }, 'maxOverflowRetries'],
    [{ prune: { keepHeadChars: 8000 } }, 'keepHeadChars'],
    [{ prune: { minChars: 0 } }, 'minChars'],
    [{ estimator: 'fast' }, 'estimator'],
    [{ summarizer: 42 }, 'summarizer'],
    [{ bogus: true }, 'bogus'],
  ])('%j fails the plugin config', async (config, field) => {
    const error = await createHarness({ model: scriptedModel([]), patches: [{ id: 'compaction', config }] }).catch(
      (thrown: unknown) => thrown,
    )
    expect(HarnessError.is(error)).toBe(true)
    expect(JSON.stringify({ message: (error as Error).message, cause: String((error as Error).cause) })).toContain(
      field,
    )
  })

  test('the heuristic estimator counts text, tool calls, tool results, images, system and tools', () => {
    const messages: Message[] = [
      {
        id: 'u',
        role: 'user',
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', mediaType: 'image/png', uri: 'data:,' },
        ],
        source: { kind: 'user' },
      },
      {
        id: 'a',
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'abcd' },
          { type: 'tool-call', id: 'k', name: 'read', arguments: '{"p":1}' },
        ],
        source: { kind: 'model', provider: 'mock', model: 'mock' },
      },
      {
        id: 't',
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: 'k', content: [{ type: 'text', text: 'x'.repeat(9) }] }],
        source: { kind: 'tool', callId: 'k' },
      },
    ]
    const tools = [{ name: 'read', description: 'reads', parameters: { type: 'object' } }]
    const expected =
      4 + 2 + 1000 + (4 + Math.ceil(15 / 4)) + (4 + 3) + Math.ceil(7 / 4) + Math.ceil(JSON.stringify(tools).length / 4)
    expect(heuristicEstimate(messages, { system: 'be nice', tools })).toBe(expected)
    expect(heuristicEstimate([], {})).toBe(0)
  })

  test('the uncalibrated estimate equals the heuristic over header and surface, across appends and a replace', async () => {
    const made = await setup({
      script: replies(3),
      model: { info: { contextWindow: 100000 } },
      compaction: { summarizer: stub('S') },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    const engine: CompactionEngine = agent.ctx.compaction
    const expected = () => {
      const header = agent.session.requestHeader()
      return heuristicEstimate(agent.session.deriveMessages(), {
        ...(header?.system === undefined ? {} : { system: header.system }),
        ...(header?.tools === undefined ? {} : { tools: header.tools }),
      })
    }
    expect(engine.estimate({ agent })).toBe(0)
    for (let turn = 1; turn <= 3; turn++) {
      await completeTurns(agent, 1, turn)
      expect(engine.estimate({ agent })).toBe(expected())
    }
    await agent.compact()
    expect(engine.estimate({ agent })).toBe(expected())
    expect(engine.estimate({ agent })).toBeLessThan(6 * 104)
  })

  test('a custom estimator drives pressure', async () => {
    const seen: number[] = []
    const made = await setup({
      script: replies(3),
      model: { info: { contextWindow: 100 } },
      compaction: {
        summarizer: stub('S'),
        estimator: (messages) => {
          seen.push(messages.length)
          return messages.length >= 5 ? 1000 : 10
        },
      },
    })
    harness = made.harness
    const agent = await harness.createAgent()
    await completeTurns(agent, 3)
    expect(compactionEvents(agent.session.events).map((event) => event.type)).toEqual([
      'compaction/start',
      'compaction/summary',
      'compaction/end',
    ])
    expect(seen.slice(0, 3)).toEqual([1, 3, 5])
  })
})

describe('modelSummarizer options', () => {
  test.each([
    [null, ''],
    [8192, ''],
    [{ maxToken: 2048 }, 'maxToken'],
    [{ maxTokens: 0 }, 'maxTokens'],
    [{ maxTokens: 1.5 }, 'maxTokens'],
    [{ provider: '' }, 'provider'],
    [{ model: 7 }, 'model'],
    [{ instruction: '' }, 'instruction'],
    [{ retry: 3 }, 'retry'],
    [{ retry: { maxRetries: -1 } }, 'retry.maxRetries'],
    [{ retry: { tries: 2 } }, 'retry.tries'],
  ])('%j → InvalidOptionsError at %j', (options, field) => {
    let error: unknown
    try {
      modelSummarizer(options as never)
    } catch (thrown) {
      error = thrown
    }
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field })
  })

  test('valid options give a summarizer', () => {
    expect(
      modelSummarizer({
        provider: 'mock',
        model: 'm',
        maxTokens: 2048,
        instruction: 'sum up',
        retry: { maxRetries: 1 },
      }),
    ).toBeTypeOf('function')
  })

  test('a bad retry policy in the entry config fails the start, not the first compaction', async () => {
    const config = { summarizer: { retry: { jitter: 2 } } }
    const error = await createHarness({ model: scriptedModel([]), patches: [{ id: 'compaction', config }] }).catch(
      (thrown: unknown) => thrown,
    )
    expect(HarnessError.is(error)).toBe(true)
    expect(String((error as Error).cause)).toContain('retry.jitter')
  })
})

describe('a custom engine with installCompactionTriggers', () => {
  test('the triggers drive any engine; a throwing engine never breaks the turn', async () => {
    const calls: string[] = []
    const engine: CompactionEngine = {
      compactIfNeeded: async (input) => {
        calls.push(input.trigger)
        throw new Error('engine bug')
      },
      compactNow: async () => null,
      compactRange: async () => {
        throw new Error('unused')
      },
      estimate: () => 0,
    }
    const custom = definePlugin({
      name: 'my-compaction',
      provides: [services.compaction],
      apply(ctx) {
        ctx.provide(services.compaction, engine)
        installCompactionTriggers(ctx, engine, { maxOverflowRetries: 1 })
      },
    })
    const logged: string[] = []
    harness = await createHarness({
      model: scriptedModel([fail('CONTEXT_WINDOW_EXCEEDED'), text('ok')]),
      clock: fakeClock(),
      ids: fakeIds(),
      logger: { debug() {}, info() {}, warn() {}, error: (message) => logged.push(message) },
      patches: [{ id: 'compaction', plugin: custom }],
    })
    const agent = await harness.createAgent()
    await expect(agent.run('one')).resolves.toMatchObject({
      reason: { kind: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } },
    })
    await expect(agent.run('two')).resolves.toMatchObject({ reason: { kind: 'completed' }, text: 'ok' })
    expect(calls).toEqual(['pressure', 'context-overflow', 'pressure'])
    expect(logged.filter((message) => message.includes('compaction trigger'))).toHaveLength(3)
    await expect(agent.compact()).resolves.toBeNull()
  })
})
