import { afterEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  type Harness,
  type HarnessOptions,
  InvalidOptionsError,
  type LlmAdaptersChangePayload,
  type LlmStreamPayload,
  type ModelRegistry,
  ServiceMissingError,
  type StreamChunk,
  services,
} from 'yoke'
import { ModelRouter, modelEvents, resolveModelRoute } from '../../src/model/index.js'
import { deepFreeze, rejectionOf } from '../helpers/outcomes.js'
import { collect, modelHarness, req, textAdapter, textChunks } from './registry-helpers.js'

const open: Harness[] = []

async function start(options: HarnessOptions = {}): Promise<{ harness: Harness; reg: ModelRegistry }> {
  const { harness } = await modelHarness(options)
  open.push(harness)
  return { harness, reg: harness.ctx.get(services.models) }
}

afterEach(async () => {
  for (const running of open.splice(0)) await running.close()
})

async function optionsError(options: unknown): Promise<InvalidOptionsError> {
  const error = await rejectionOf(createHarness(options as HarnessOptions))
  if (!InvalidOptionsError.is(error)) throw new Error(`expected InvalidOptionsError, got ${String(error)}`)
  return error
}

describe('the model entry', () => {
  test('provides services.models, a ModelRouter, and registers the llm events', async () => {
    const { harness, reg } = await start()
    expect(reg).toBeInstanceOf(ModelRouter)
    expect(harness.describe().entries.find((entry) => entry.id === 'model')).toMatchObject({
      id: 'model',
      name: 'model',
      source: 'default',
      disabled: false,
      provides: ['models'],
    })
    expect(Object.keys(modelEvents.modes)).toEqual(['llm/stream', 'llm/adapters-change'])
    expect(reg.providers()).toEqual([])
    expect((reg as ModelRouter).defaults).toBeUndefined()
  })

  test('disabled, it provides no models service', async () => {
    const { harness } = await modelHarness({
      patches: [
        { id: 'model', disabled: true },
        { id: 'agent-loop', disabled: true },
        { id: 'compaction', disabled: true },
      ],
    })
    open.push(harness)
    expect(() => harness.ctx.get(services.models)).toThrow(ServiceMissingError)
  })

  test('createHarness({ model: adapter }) routes the adapter globally and exposes its defaults', async () => {
    const adapter = textAdapter('a', 'harness model', { defaultModel: 'a-1' })
    const { harness, reg } = await start(deepFreeze({ model: adapter }, new Set([adapter])))
    expect(reg.providers()).toEqual(['a'])
    expect(await collect(reg.stream(req()))).toEqual(textChunks('harness model'))
    const agent = {}
    expect(await collect(reg.stream(req(), { scope: agent }))).toEqual(textChunks('harness model'))
    expect((reg as ModelRouter).defaults).toEqual({ provider: 'a', model: 'a-1' })
    const seen: LlmAdaptersChangePayload[] = []
    harness.on('llm/adapters-change', (payload) => {
      seen.push(payload)
    })
    await harness.close()
    expect(seen).toEqual([{ providers: ['a'] }])
  })

  test('a ModelRoute registers under route.provider; its call-config fields become the defaults', async () => {
    const adapter = textAdapter('a', 'routed', { defaultModel: 'a-1' })
    const route = {
      adapter,
      provider: 'x',
      model: 'big',
      maxTokens: 100,
      temperature: 0.3,
      stop: ['END'],
      reasoningEffort: 'high',
    }
    const { reg } = await start({ model: route })
    expect(reg.providers()).toEqual(['x'])
    expect(await collect(reg.stream(req({ provider: 'x' })))).toEqual(textChunks('routed'))
    expect((reg as ModelRouter).defaults).toEqual({
      provider: 'x',
      model: 'big',
      maxTokens: 100,
      temperature: 0.3,
      stop: ['END'],
      reasoningEffort: 'high',
    })
    expect(route).toEqual({
      adapter,
      provider: 'x',
      model: 'big',
      maxTokens: 100,
      temperature: 0.3,
      stop: ['END'],
      reasoningEffort: 'high',
    })
  })

  test('an agent-scoped adapter for the harness provider never collides with it', async () => {
    const { harness, reg } = await start({ model: textAdapter('a', 'harness') })
    const agent = {}
    harness.ctx.child('agent', { scope: agent }).get(services.models).register(textAdapter('a', 'agent'))
    expect(await collect(reg.stream(req(), { scope: agent }))).toEqual(textChunks('agent'))
    expect(await collect(reg.stream(req()))).toEqual(textChunks('harness'))
  })

  test.each([
    ['not an object', 'gpt', 'model'],
    ['an object without stream()', {}, 'model'],
    ['an adapter with a bad provider id', { provider: 'Bad', stream() {} }, 'model.provider'],
    ['a route without an adapter', { adapter: {} }, 'model.adapter'],
    ['a route with a bad provider', { adapter: textAdapter('a', 'x'), provider: 'A B' }, 'model.provider'],
    ['a route with maxTokens 0', { adapter: textAdapter('a', 'x'), maxTokens: 0 }, 'model.maxTokens'],
    ['a route with temperature 3', { adapter: textAdapter('a', 'x'), temperature: 3 }, 'model.temperature'],
    ['a route with an empty stop sequence', { adapter: textAdapter('a', 'x'), stop: [''] }, 'model.stop[0]'],
    ['a route with an empty model', { adapter: textAdapter('a', 'x'), model: '' }, 'model.model'],
    ['a route with an unknown field', { adapter: textAdapter('a', 'x'), system: 'S' }, 'model.system'],
  ])('a bad harness model option (%s) rejects InvalidOptionsError', async (_name, model, field) => {
    const error = await optionsError({ model })
    expect(error.code).toBe('INVALID_OPTIONS')
    expect(error.field).toBe(field)
    expect(error.message.startsWith(`options.${field}:`)).toBe(true)
  })

  test('a route may fix the provider of an adapter whose own provider is not an id', async () => {
    const { reg } = await start({
      model: { adapter: { provider: 'Not An Id', stream: textAdapter('x', 'fixed').stream }, provider: 'fixed' },
    })
    expect(reg.providers()).toEqual(['fixed'])
  })

  test('resolveModelRoute: adapter defaults and route overrides', () => {
    const adapter = textAdapter('a', 'x', { defaultModel: 'a-1' })
    expect(resolveModelRoute(adapter)).toEqual({ adapter, provider: 'a', defaults: { provider: 'a', model: 'a-1' } })
    expect(resolveModelRoute({ adapter: textAdapter('b', 'x') }).defaults).toEqual({ provider: 'b' })
    const resolved = resolveModelRoute({ adapter, provider: 'z', model: 'm', maxTokens: 5 })
    expect(resolved.provider).toBe('z')
    expect(resolved.defaults).toEqual({ provider: 'z', model: 'm', maxTokens: 5 })
    expect(Object.isFrozen(resolved.defaults)).toBe(true)
  })
})

describe('llm/stream middleware', () => {
  test('wraps the stream; sees the request, the prepared call and the scope', async () => {
    const { harness, reg } = await start()
    const agent = {}
    reg.register(textAdapter('a', 'hi'))
    const payloads: LlmStreamPayload[] = []
    harness.ctx.child('agent-listener', { scope: agent }).on('llm/stream', async (payload, next) => {
      payloads.push(payload)
      const inner = await next()
      return (async function* shout() {
        for await (const chunk of inner)
          yield chunk.type === 'text-delta' ? { ...chunk, text: chunk.text.toUpperCase() } : chunk
      })()
    })
    expect(await collect(reg.stream(req()))).toEqual(textChunks('hi'))
    expect(payloads).toHaveLength(0)
    const request = req()
    expect(await collect(reg.stream(request, { scope: agent }))).toEqual(textChunks('HI'))
    const prepared = reg.prepareCall({ provider: 'a', model: 'm' }, { scope: agent })
    expect(await collect(prepared.stream(req()))).toEqual(textChunks('HI'))
    expect(payloads).toHaveLength(2)
    expect(payloads[0]?.request).toBe(request)
    expect('prepared' in (payloads[0] as object)).toBe(false)
    expect(payloads[1]?.prepared).toBe(prepared)
  })

  test('may replace the stream without calling next: the adapter is not called', async () => {
    const { harness, reg } = await start()
    const adapter = textAdapter('a', 'adapter')
    reg.register(adapter)
    const replacement: StreamChunk[] = textChunks('cached')
    harness.ctx.on('llm/stream', () =>
      (async function* cached() {
        yield* replacement
      })(),
    )
    expect(await collect(reg.stream(req()))).toEqual(replacement)
    expect(await collect(reg.stream(req({ provider: 'unrouted' })))).toEqual(replacement)
    expect(adapter.requests).toHaveLength(0)
  })

  test('next(replacement) streams the replacement request, validated by the innermost step', async () => {
    const { harness, reg } = await start()
    const adapter = textAdapter('b', 'from b')
    reg.register(adapter)
    harness.ctx.on('llm/stream', (payload, next) => next({ request: { ...payload.request, provider: 'b' } }))
    expect(await collect(reg.stream(req({ provider: 'a' })))).toEqual(textChunks('from b'))
    expect(adapter.requests[0]?.provider).toBe('b')
    const invalid = await collect(reg.stream(req({ maxTokens: -1 })))
    expect(invalid[0]).toMatchObject({
      failure: { code: 'INVALID_REQUEST', detail: { field: 'maxTokens', value: -1 } },
    })
  })

  test('a middleware throw stays thrown: the iteration rejects with it', async () => {
    const { harness, reg } = await start()
    reg.register(textAdapter('a', 'x'))
    const bug = new Error('middleware bug')
    harness.ctx.on('llm/stream', () => {
      throw bug
    })
    const stream = reg.stream(req())
    await expect(collect(stream)).rejects.toBe(bug)
  })
})
