import { afterEach, describe, expect, test } from 'vitest'
import {
  definePlugin,
  type Harness,
  type LlmAdaptersChangePayload,
  LlmError,
  type ModelRegistry,
  ModelRegistryError,
  type ModelRequest,
  type StreamChunk,
  services,
} from 'yoke'
import { ModelRouter } from '../../src/model/index.js'
import { scriptedModel, text } from 'yoke/testing'
import { thrownBy } from '../helpers/outcomes.js'
import type { RecordingLogger } from '../helpers/recording-logger.js'
import { collect, fakeAdapter, gate, modelHarness, req, textAdapter, textChunks } from './registry-helpers.js'

const open: Harness[] = []
let harness: Harness
let logger: RecordingLogger
let reg: ModelRegistry

async function start(): Promise<void> {
  ;({ harness, logger } = await modelHarness())
  open.push(harness)
  reg = harness.ctx.get(services.models)
}

afterEach(async () => {
  for (const running of open.splice(0)) await running.close()
})

function changes(): LlmAdaptersChangePayload[] {
  const seen: LlmAdaptersChangePayload[] = []
  harness.ctx.on('llm/adapters-change', (payload) => {
    seen.push(payload)
  })
  return seen
}

function registryError(action: () => unknown): ModelRegistryError {
  const error = thrownBy(action)
  if (!ModelRegistryError.is(error)) throw new Error(`expected a ModelRegistryError, got ${String(error)}`)
  return error
}

function llmError(action: () => unknown): LlmError {
  const error = thrownBy(action)
  if (!LlmError.is(error)) throw new Error(`expected an LlmError, got ${String(error)}`)
  return error
}

const noAdapter = (provider: string): StreamChunk[] => [
  {
    type: 'finish',
    reason: 'error',
    failure: {
      code: 'NO_ADAPTER',
      message: `no adapter serves provider "${provider}"`,
      retryable: false,
      phase: 'pre-request',
      detail: { provider },
    },
  },
]

describe('routing', () => {
  test('a registered adapter serves its provider; duplicates are refused all-or-nothing', async () => {
    await start()
    const a = textAdapter('a', 'from A')
    reg.register(a)
    expect(await collect(reg.stream(req({ provider: 'a' })))).toEqual(textChunks('from A'))
    expect(registryError(() => reg.register(textAdapter('a', 'B')))).toMatchObject({
      code: 'DUPLICATE_PROVIDER',
      provider: 'a',
    })
    const c = textAdapter('c', 'C')
    expect(registryError(() => reg.register(c, { providers: ['b', 'a'] }))).toMatchObject({
      code: 'DUPLICATE_PROVIDER',
      provider: 'a',
    })
    expect(reg.providers()).toEqual(['a'])
    expect(await collect(reg.stream(req({ provider: 'b' })))).toEqual(noAdapter('b'))
  })

  test('through a scoped context, another adapter for the same provider serves that scope only', async () => {
    await start()
    reg.register(textAdapter('a', 'harness'))
    const agent = { name: 'agent' }
    const other = { name: 'other' }
    const agentCtx = harness.ctx.child('agent', { scope: agent })
    const registration = agentCtx.get(services.models).register(textAdapter('a', 'agent'))
    expect(registration.providers).toEqual(['a'])
    expect(await collect(reg.stream(req(), { scope: agent }))).toEqual(textChunks('agent'))
    expect(await collect(reg.stream(req()))).toEqual(textChunks('harness'))
    expect(await collect(reg.stream(req(), { scope: other }))).toEqual(textChunks('harness'))
    expect(reg.providers(agent)).toEqual(['a'])
    await agentCtx.dispose()
    expect(await collect(reg.stream(req(), { scope: agent }))).toEqual(textChunks('harness'))
  })

  test("through a real agent.ctx, another adapter for 'a' is accepted and serves that agent only", async () => {
    const harnessModel = scriptedModel([text('from A'), text('from A again')], { provider: 'a' })
    const agentModel = scriptedModel([text('from B')], { provider: 'a' })
    ;({ harness, logger } = await modelHarness({ model: harnessModel }))
    open.push(harness)
    reg = harness.ctx.get(services.models)
    const first = await harness.createAgent()
    const second = await harness.createAgent()
    const registration = first.ctx.get(services.models).register(agentModel)
    expect(registration.providers).toEqual(['a'])
    expect(reg.providers()).toEqual(['a'])
    expect(reg.providers(first)).toEqual(['a'])
    expect(await first.run('hi')).toMatchObject({ reason: { kind: 'completed' }, text: 'from B' })
    expect(await second.run('hi')).toMatchObject({ reason: { kind: 'completed' }, text: 'from A' })
    const unscoped = await collect(reg.stream(req({ provider: 'a', model: 'mock' })))
    expect(unscoped.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.text] : []))).toEqual(['from A again'])
    expect(agentModel.requests).toHaveLength(1)
    expect(harnessModel.requests).toHaveLength(2)
    // The harness layer still refuses a second adapter for 'a'.
    expect(registryError(() => reg.register(textAdapter('a', 'C'))).code).toBe('DUPLICATE_PROVIDER')
    agentModel.assertComplete()
    harnessModel.assertComplete()
  })

  test('a scope resolves along its chain, nearest layer first, then the global layer', async () => {
    await start()
    const preset = { name: 'preset' }
    const agent = { name: 'agent' }
    const presetCtx = harness.ctx.child('preset', { scope: preset })
    const agentCtx = harness.ctx.child('agent', { scope: agent })
    agentCtx.scopes.bindParent(agent, preset)
    reg.register(textAdapter('g', 'global'))
    presetCtx.get(services.models).register(textAdapter('p', 'preset'), { providers: ['p', 'shared'] })
    agentCtx.get(services.models).register(textAdapter('shared', 'agent'))
    expect(await collect(reg.stream(req({ provider: 'p' }), { scope: agent }))).toEqual(textChunks('preset'))
    expect(await collect(reg.stream(req({ provider: 'shared' }), { scope: agent }))).toEqual(textChunks('agent'))
    expect(await collect(reg.stream(req({ provider: 'shared' }), { scope: preset }))).toEqual(textChunks('preset'))
    expect(await collect(reg.stream(req({ provider: 'g' }), { scope: agent }))).toEqual(textChunks('global'))
    expect(reg.providers(agent)).toEqual(['g', 'p', 'shared'])
    expect(reg.providers(preset)).toEqual(['g', 'p', 'shared'])
    expect(reg.providers()).toEqual(['g'])
    expect(await collect(reg.stream(req({ provider: 'p' })))).toEqual(noAdapter('p'))
  })

  test('provider ids and adapters are checked; nothing is registered on a refusal', async () => {
    await start()
    const seen = changes()
    for (const provider of ['', 'Bad', '-x', '.x', 'a b', 'x'.repeat(65), 7]) {
      expect(registryError(() => reg.register(textAdapter('ok', 'x'), { providers: [provider as string] })).code).toBe(
        'INVALID_PROVIDER',
      )
    }
    expect(registryError(() => reg.register(textAdapter('UPPER', 'x'))).code).toBe('INVALID_PROVIDER')
    expect(registryError(() => reg.register(textAdapter('ok', 'x'), { providers: [] })).code).toBe('INVALID_PROVIDER')
    expect(registryError(() => reg.register(textAdapter('ok', 'x'), { providers: ['ok', 'ok'] }))).toMatchObject({
      code: 'DUPLICATE_PROVIDER',
      provider: 'ok',
    })
    for (const adapter of [
      {},
      { provider: 'ok', stream: 1 },
      null,
      { provider: 'ok', stream() {}, describeModel: 'x' },
    ]) {
      expect(registryError(() => reg.register(adapter as never)).code).toBe('INVALID_ADAPTER')
    }
    expect(reg.providers()).toEqual([])
    expect(seen).toEqual([])
    reg.register(textAdapter('x'.repeat(64), 'long'), { providers: ['x'.repeat(64), 'a.b_c-9'] })
    expect(reg.providers()).toEqual(['a.b_c-9', 'x'.repeat(64)])
  })

  test('providers() is sorted and a registration is an effect of the context it came through', async () => {
    await start()
    reg.register(textAdapter('b', 'b'))
    const plugin = await harness.ctx.plugin(
      definePlugin({
        name: 'routes',
        apply(ctx) {
          ctx.get(services.models).register(textAdapter('a', 'a'), { providers: ['c', 'a'] })
        },
      }),
    )
    expect(reg.providers()).toEqual(['a', 'b', 'c'])
    await plugin.dispose()
    expect(reg.providers()).toEqual(['b'])
  })

  test('the registry resolved through any context is a ModelRouter bound to it', async () => {
    await start()
    expect(reg).toBeInstanceOf(ModelRouter)
    expect(harness.ctx.get(services.models)).toBe(reg)
    const child = harness.ctx.child('child')
    expect(child.get(services.models)).not.toBe(reg)
    child.get(services.models).register(textAdapter('a', 'child'))
    expect(reg.providers()).toEqual(['a'])
    await child.dispose()
    expect(reg.providers()).toEqual([])
  })
})

describe('replace and dispose', () => {
  test('a running stream keeps the first adapter; a stream started after replace gets the second; dispose leaves NO_ADAPTER', async () => {
    await start()
    const hold = gate()
    const a = fakeAdapter('a', () =>
      (async function* held() {
        yield { type: 'text-delta', index: 0, text: 'a1' }
        await hold.promise
        yield { type: 'text-delta', index: 0, text: 'a2' }
        yield { type: 'finish', reason: 'stop' }
      })(),
    )
    const seen = changes()
    const registration = reg.register(a)
    expect(seen).toEqual([{ providers: ['a'] }])
    const running = reg.stream(req())[Symbol.asyncIterator]()
    expect(await running.next()).toEqual({ done: false, value: { type: 'text-delta', index: 0, text: 'a1' } })
    registration.replace(textAdapter('a', 'from a2'))
    expect(seen).toHaveLength(2)
    expect(await collect(reg.stream(req()))).toEqual(textChunks('from a2'))
    hold.open()
    const rest: StreamChunk[] = []
    for (let result = await running.next(); result.done !== true; result = await running.next()) rest.push(result.value)
    expect(rest).toEqual([
      { type: 'text-delta', index: 0, text: 'a2' },
      { type: 'finish', reason: 'stop' },
    ])
    await registration()
    expect(seen).toEqual([{ providers: ['a'] }, { providers: ['a'] }, { providers: ['a'] }])
    expect(await collect(reg.stream(req({ provider: 'a' })))).toEqual(noAdapter('a'))
    expect(registration.disposed).toBe(true)
  })

  test('200 streams with a replace every 10th never see NO_ADAPTER; one llm/adapters-change per replace', async () => {
    await start()
    const registration = reg.register(textAdapter('a', 'generation 0'))
    const seen = changes()
    const streams: { stream: AsyncIterable<StreamChunk>; generation: number }[] = []
    let generation = 0
    for (let index = 0; index < 200; index++) {
      if (index % 10 === 0) registration.replace(textAdapter('a', `generation ${++generation}`))
      streams.push({ stream: reg.stream(req()), generation })
    }
    expect(seen).toHaveLength(20)
    expect(
      seen.every((payload) => payload.providers.length === 1 && payload.providers[0] === 'a' && !('scope' in payload)),
    ).toBe(true)
    const results = await Promise.all(streams.map(({ stream }) => collect(stream)))
    results.forEach((chunks, index) => {
      expect(chunks).toEqual(textChunks(`generation ${streams[index]?.generation}`))
    })
  })

  test('replace validates the adapter; a refused replace changes nothing; replace after dispose is ignored', async () => {
    await start()
    const registration = reg.register(textAdapter('a', 'A'))
    const seen = changes()
    expect(registryError(() => registration.replace({ provider: 'a' } as never)).code).toBe('INVALID_ADAPTER')
    expect(await collect(reg.stream(req()))).toEqual(textChunks('A'))
    expect(seen).toEqual([])
    await registration()
    expect(seen).toHaveLength(1)
    registration.replace(textAdapter('a', 'late'))
    expect(seen).toHaveLength(1)
    expect(await collect(reg.stream(req()))).toEqual(noAdapter('a'))
  })

  test('a scoped registration emits with its scope, to scoped and untagged listeners', async () => {
    await start()
    const agent = { name: 'agent' }
    const sibling = { name: 'sibling' }
    const untagged = changes()
    const agentHeard: LlmAdaptersChangePayload[] = []
    const siblingHeard: LlmAdaptersChangePayload[] = []
    harness.ctx.child('listener', { scope: agent }).on('llm/adapters-change', (payload) => {
      agentHeard.push(payload)
    })
    harness.ctx.child('listener', { scope: sibling }).on('llm/adapters-change', (payload) => {
      siblingHeard.push(payload)
    })
    const agentCtx = harness.ctx.child('agent', { scope: agent })
    const registration = agentCtx.get(services.models).register(textAdapter('a', 'x'), { providers: ['a', 'b'] })
    registration.replace(textAdapter('a', 'y'))
    await registration()
    const expected = { providers: ['a', 'b'], scope: agent }
    expect(untagged).toEqual([expected, expected, expected])
    expect(agentHeard).toEqual([expected, expected, expected])
    expect(siblingHeard).toEqual([])
  })
})

describe('prepareCall', () => {
  const info = { defaultMaxTokens: 4096, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'high' }

  test('fills model defaults and lists them in adapterDefaults', async () => {
    await start()
    reg.register(textAdapter('a', 'ok', { describeModel: () => info }))
    const prepared = reg.prepareCall({ provider: 'a', model: 'm' })
    expect(prepared.config).toEqual({ provider: 'a', model: 'm', maxTokens: 4096, reasoningEffort: 'high' })
    expect(prepared.adapterDefaults).toEqual({ maxTokens: true, reasoningEffort: true })
    expect(prepared.info).toBe(info)
    expect(Object.isFrozen(prepared)).toBe(true)
    expect(Object.isFrozen(prepared.config)).toBe(true)
    const chosen = reg.prepareCall({ provider: 'a', model: 'm', maxTokens: 10, reasoningEffort: 'low', stop: ['x'] })
    expect(chosen.config).toEqual({ provider: 'a', model: 'm', maxTokens: 10, reasoningEffort: 'low', stop: ['x'] })
    expect('adapterDefaults' in chosen).toBe(false)
  })

  test('an effort the model does not offer throws UNSUPPORTED_REASONING_EFFORT with detail.allowed', async () => {
    await start()
    reg.register(textAdapter('a', 'ok', { describeModel: () => info }))
    const error = llmError(() => reg.prepareCall({ provider: 'a', model: 'm', reasoningEffort: 'max' }))
    expect(error.code).toBe('UNSUPPORTED_REASONING_EFFORT')
    expect(error.failure).toMatchObject({
      code: 'UNSUPPORTED_REASONING_EFFORT',
      retryable: false,
      phase: 'pre-request',
    })
    expect(error.failure.detail).toEqual({ field: 'reasoningEffort', value: 'max', allowed: ['low', 'high'] })
  })

  test('an invalid config throws INVALID_REQUEST naming the field', async () => {
    await start()
    const error = llmError(() => reg.prepareCall({ provider: 'a', model: 'm', maxTokens: 0 }))
    expect(error.failure).toMatchObject({
      code: 'INVALID_REQUEST',
      phase: 'pre-request',
      retryable: false,
      detail: { field: 'maxTokens', value: 0 },
    })
    expect(llmError(() => reg.prepareCall({ provider: 'a', model: '' })).failure.detail).toEqual({
      field: 'model',
      value: '',
    })
    expect(llmError(() => reg.prepareCall({ provider: 'a', model: 'm', system: 'S' } as never)).failure.detail).toEqual(
      {
        field: 'system',
        value: 'S',
      },
    )
    expect(llmError(() => reg.prepareCall({ provider: 'a', model: 'm', temperature: 3 })).failure.detail).toEqual({
      field: 'temperature',
      value: 3,
    })
  })

  test('prepared.stream runs once, for the same provider and model, with the adapter bound at prepare time', async () => {
    await start()
    const registration = reg.register(textAdapter('a', 'bound', { describeModel: () => info }))
    const prepared = reg.prepareCall({ provider: 'a', model: 'm' })
    registration.replace(textAdapter('a', 'replacement'))
    expect(registryError(() => prepared.stream(req({ model: 'other' }))).code).toBe('PREPARED_CALL_MISMATCH')
    expect(registryError(() => prepared.stream(req({ provider: 'b' }))).code).toBe('PREPARED_CALL_MISMATCH')
    expect(await collect(prepared.stream(req({ maxTokens: 4096, reasoningEffort: 'high' })))).toEqual(
      textChunks('bound'),
    )
    expect(registryError(() => prepared.stream(req())).code).toBe('PREPARED_CALL_REUSED')
    expect(await collect(reg.stream(req()))).toEqual(textChunks('replacement'))
  })

  test('an unrouted provider prepares without info and streams through whatever is routed then', async () => {
    await start()
    const prepared = reg.prepareCall({ provider: 'later', model: 'm', temperature: 0.5 })
    expect(prepared.config).toEqual({ provider: 'later', model: 'm', temperature: 0.5 })
    expect('info' in prepared).toBe(false)
    expect('adapterDefaults' in prepared).toBe(false)
    reg.register(textAdapter('later', 'served'))
    expect(await collect(prepared.stream(req({ provider: 'later', temperature: 0.5 })))).toEqual(textChunks('served'))
    const orphan = reg.prepareCall({ provider: 'none', model: 'm' })
    expect(await collect(orphan.stream(req({ provider: 'none' })))).toEqual(noAdapter('none'))
  })

  test('a prepared call resolves from its scope', async () => {
    await start()
    const agent = { name: 'agent' }
    reg.register(textAdapter('a', 'global'))
    harness.ctx
      .child('agent', { scope: agent })
      .get(services.models)
      .register(textAdapter('a', 'scoped', { describeModel: () => ({ contextWindow: 7 }) }))
    const prepared = reg.prepareCall({ provider: 'a', model: 'm' }, { scope: agent })
    expect(prepared.info).toEqual({ contextWindow: 7 })
    expect(await collect(prepared.stream(req()))).toEqual(textChunks('scoped'))
  })
})

describe('describe', () => {
  test('asks the routed adapter; a throwing describeModel is reported and gives undefined', async () => {
    await start()
    const asked: string[] = []
    reg.register(
      textAdapter('a', 'x', {
        describeModel: (model) => {
          asked.push(model)
          if (model === 'broken') throw new Error('no catalogue')
          return { contextWindow: 1000 }
        },
      }),
    )
    reg.register(textAdapter('plain', 'x'))
    expect(reg.describe('a', 'm')).toEqual({ contextWindow: 1000 })
    expect(reg.describe('a', 'broken')).toBeUndefined()
    expect(reg.describe('plain', 'm')).toBeUndefined()
    expect(reg.describe('nobody', 'm')).toBeUndefined()
    expect(asked).toEqual(['m', 'broken'])
    const warnings = logger.at('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.message).toContain('describeModel of provider "a" threw')
    expect(warnings[0]?.fields?.['error']).toEqual(new Error('no catalogue'))
  })

  test('a throwing describeModel does not fail prepareCall or a stream with an effort', async () => {
    await start()
    reg.register(
      textAdapter('a', 'ok', {
        describeModel: () => {
          throw new Error('down')
        },
      }),
    )
    const prepared = reg.prepareCall({ provider: 'a', model: 'm', reasoningEffort: 'high' })
    expect(prepared.config).toEqual({ provider: 'a', model: 'm', reasoningEffort: 'high' })
    expect(await collect(reg.stream(req({ reasoningEffort: 'high' })))).toEqual(textChunks('ok'))
    expect(logger.at('warn')).toHaveLength(2)
  })
})

describe('stream-time checks', () => {
  test('an effort outside the routed model reasoningEfforts gives one finish error, the adapter not called', async () => {
    await start()
    const adapter = textAdapter('a', 'ok', { describeModel: () => ({ reasoningEfforts: ['off', 'high'] }) })
    reg.register(adapter)
    expect(await collect(reg.stream(req({ reasoningEffort: 'medium' })))).toEqual([
      {
        type: 'finish',
        reason: 'error',
        failure: {
          code: 'UNSUPPORTED_REASONING_EFFORT',
          message: 'reasoning effort "medium" is not offered by this model (allowed: "off", "high")',
          retryable: false,
          phase: 'pre-request',
          detail: { field: 'reasoningEffort', value: 'medium', allowed: ['off', 'high'] },
        },
      },
    ])
    expect(adapter.requests).toHaveLength(0)
    expect(await collect(reg.stream(req({ reasoningEffort: 'high' })))).toEqual(textChunks('ok'))
    expect(adapter.requests).toHaveLength(1)
  })

  test('models.stream applies no defaults', async () => {
    await start()
    const adapter = textAdapter('a', 'ok', {
      describeModel: () => ({ defaultMaxTokens: 10, defaultReasoningEffort: 'high' }),
    })
    reg.register(adapter)
    await collect(reg.stream(req()))
    const received = adapter.requests[0] as ModelRequest
    expect('maxTokens' in received).toBe(false)
    expect('reasoningEffort' in received).toBe(false)
  })
})
