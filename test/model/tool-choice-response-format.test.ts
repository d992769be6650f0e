/**
 * `toolChoice` and `responseFormat` in the model layer: request validation (typed
 * `INVALID_REQUEST` with the field), deep-freezing, and the instruction the registry appends to
 * `system` for an adapter without `supportsResponseFormat`.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import { type Harness, type ModelRegistry, type ModelRequest, responseFormatInstruction, services } from 'yoke'
import { scriptedModel, text } from 'yoke/testing'
import { validateModelRequest } from '../../src/model/index.js'
import { isDeepFrozen } from '../helpers/outcomes.js'
import { collect, fakeAdapter, modelHarness, req, textAdapter, textChunks } from './registry-helpers.js'

const open: Harness[] = []
let reg: ModelRegistry

async function start(): Promise<void> {
  const started = await modelHarness()
  open.push(started.harness)
  reg = started.harness.ctx.get(services.models)
}

afterEach(async () => {
  for (const running of open.splice(0)) await running.close()
})

const tool = (name: string) => ({ name, description: 'd', parameters: { type: 'object' } })
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }

/** [rule, request overrides, field, detail value (undefined: the value key is absent)] */
const violations: readonly [string, Record<string, unknown>, string, unknown][] = [
  ['toolChoice is a known string', { tools: [tool('a')], toolChoice: 'any' }, 'toolChoice', 'any'],
  ['toolChoice is not a number', { toolChoice: 3 }, 'toolChoice', 3],
  ['toolChoice { name } has a non-empty name', { tools: [tool('a')], toolChoice: { name: '' } }, 'toolChoice.name', ''],
  ['toolChoice { name } has no other key', { tools: [tool('a')], toolChoice: { name: 'a', x: 1 } }, 'toolChoice.x', 1],
  [
    'toolChoice { name } names a tool of the request',
    { tools: [tool('a')], toolChoice: { name: 'b' } },
    'toolChoice.name',
    'b',
  ],
  ['toolChoice { name } without tools', { toolChoice: { name: 'a' } }, 'toolChoice.name', 'a'],
  ["toolChoice 'required' without tools", { toolChoice: 'required' }, 'toolChoice', 'required'],
  ["toolChoice 'required' with an empty tool list", { tools: [], toolChoice: 'required' }, 'toolChoice', 'required'],
  ['responseFormat is an object', { responseFormat: 'json' }, 'responseFormat', 'json'],
  [
    "responseFormat type is 'json'",
    { responseFormat: { type: 'json_schema', schema } },
    'responseFormat.type',
    'json_schema',
  ],
  ['responseFormat schema is required', { responseFormat: { type: 'json' } }, 'responseFormat.schema', undefined],
  [
    'responseFormat schema is a JSON object',
    { responseFormat: { type: 'json', schema: [] } },
    'responseFormat.schema',
    [],
  ],
  [
    'responseFormat schema is lossless JSON',
    { responseFormat: { type: 'json', schema: { n: Number.NaN } } },
    'responseFormat',
    undefined,
  ],
  [
    'responseFormat name is non-empty',
    { responseFormat: { type: 'json', schema, name: '' } },
    'responseFormat.name',
    '',
  ],
  [
    'responseFormat has no other key',
    { responseFormat: { type: 'json', schema, strict: true } },
    'responseFormat.strict',
    true,
  ],
]

describe('validating toolChoice and responseFormat', () => {
  test.each(violations)('%s', async (_rule, overrides, field, value) => {
    const found = validateModelRequest(req(overrides))
    expect(found?.field).toBe(field)
    await start()
    const adapter = textAdapter('a', 'never')
    reg.register(adapter)
    const chunks = await collect(reg.stream(req(overrides)))
    expect(chunks).toHaveLength(1)
    expect(chunks[0]).toMatchObject({
      type: 'finish',
      reason: 'error',
      failure: { code: 'INVALID_REQUEST', message: expect.stringContaining(field), phase: 'pre-request' },
    })
    const detail = (chunks[0] as { failure: { detail: Record<string, unknown> } }).failure.detail
    expect(detail['field']).toBe(field)
    if (value !== undefined) expect(detail['value']).toEqual(value)
    expect(adapter.requests).toHaveLength(0)
  })

  test.each([
    ['auto without tools', { toolChoice: 'auto' }],
    ['none without tools', { toolChoice: 'none' }],
    ['none with tools', { tools: [tool('a')], toolChoice: 'none' }],
    ['required with tools', { tools: [tool('a')], toolChoice: 'required' }],
    ['a named tool', { tools: [tool('a'), tool('b')], toolChoice: { name: 'b' } }],
    ['a response format', { responseFormat: { type: 'json', schema } }],
    ['a named response format', { responseFormat: { type: 'json', schema, name: 'weather report' } }],
    ['both set to undefined', { toolChoice: undefined, responseFormat: undefined }],
  ])('accepts %s', (_name, overrides) => {
    expect(validateModelRequest(req(overrides))).toBeUndefined()
  })
})

describe('freezing and forwarding', () => {
  test('an unfrozen toolChoice and responseFormat reach the adapter as deep-frozen copies; the caller objects are untouched', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('ok'))
    Object.assign(adapter, { supportsResponseFormat: true })
    reg.register(adapter)
    const toolChoice = { name: 'a' }
    const responseFormat = { type: 'json' as const, schema: { type: 'object', properties: { a: { type: 'number' } } } }
    const request = req({ tools: [tool('a')], toolChoice, responseFormat })
    await collect(reg.stream(request))
    const received = adapter.requests[0] as ModelRequest
    expect(received.toolChoice).toEqual(toolChoice)
    expect(received.responseFormat).toEqual(responseFormat)
    expect(received.system).toBeUndefined()
    expect(isDeepFrozen(received.toolChoice)).toBe(true)
    expect(isDeepFrozen(received.responseFormat)).toBe(true)
    expect(Object.isFrozen(toolChoice)).toBe(false)
    expect(Object.isFrozen(responseFormat.schema)).toBe(false)
  })
})

describe('the instruction for an adapter without supportsResponseFormat', () => {
  const format = { type: 'json' as const, schema }
  const instruction = responseFormatInstruction(format)

  test('the instruction is a fixed sentence and the compact schema', () => {
    expect(instruction).toBe(
      `Answer with one JSON value and nothing else (no prose, no code fence). It must match this JSON Schema:\n${JSON.stringify(schema)}`,
    )
    expect(responseFormatInstruction({ ...format, name: 'other' })).toBe(instruction)
  })

  test.each([
    ['no system prompt', {}, instruction],
    ['an empty system prompt', { system: '' }, instruction],
    ['a system prompt', { system: 'Be brief.' }, `Be brief.\n\n${instruction}`],
  ])(
    '%s: the adapter sees the instruction appended to system, responseFormat kept',
    async (_name, overrides, system) => {
      await start()
      const adapter = fakeAdapter('a', () => textChunks('{"city":"Paris"}'))
      reg.register(adapter)
      const request = req({ ...overrides, responseFormat: format })
      await collect(reg.stream(request))
      const received = adapter.requests[0] as ModelRequest
      expect(received.system).toBe(system)
      expect(received.responseFormat).toEqual(format)
      expect(Object.isFrozen(received)).toBe(true)
      expect(received.signal).toBe(request.signal)
    },
  )

  test('the same request twice gives the same system prompt (deterministic)', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('{}'))
    reg.register(adapter)
    await collect(reg.stream(req({ system: 'S', responseFormat: format })))
    await collect(reg.stream(req({ system: 'S', responseFormat: format })))
    expect(adapter.requests[0]?.system).toBe(adapter.requests[1]?.system)
  })

  test('without responseFormat the request is unchanged', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('ok'))
    reg.register(adapter)
    await collect(reg.stream(req({ system: 'S' })))
    expect(adapter.requests[0]?.system).toBe('S')
  })

  test('an adapter with supportsResponseFormat gets the plain system prompt; the scripted model declares it', async () => {
    await start()
    const model = scriptedModel([text('{}')], { provider: 'a' })
    expect(model.supportsResponseFormat).toBe(true)
    reg.register(model)
    await collect(reg.stream(req({ system: 'S', responseFormat: format, tools: [tool('t')], toolChoice: 'none' })))
    expect(model.requests[0]).toMatchObject({ system: 'S', responseFormat: format, toolChoice: 'none' })
  })

  test('beforeAdapter (the reconstruction check) sees the request without the instruction', async () => {
    await start()
    const adapter = fakeAdapter('a', () => textChunks('{}'))
    reg.register(adapter)
    const seen: (string | undefined)[] = []
    const prepared = reg.prepareCall(
      { provider: 'a', model: 'm' },
      { beforeAdapter: (request) => seen.push(request.system) },
    )
    await collect(prepared.stream(req({ system: 'S', responseFormat: format })))
    expect(seen).toEqual(['S'])
    expect(adapter.requests[0]?.system).toBe(`S\n\n${instruction}`)
  })

  test('a non-boolean supportsResponseFormat is INVALID_ADAPTER', async () => {
    await start()
    const adapter = { ...textAdapter('a', 'x'), supportsResponseFormat: 'yes' }
    expect(() => reg.register(adapter as never)).toThrow(expect.objectContaining({ code: 'INVALID_ADAPTER' }))
  })
})

describe('paths of unknown keys', () => {
  test('an unknown key that is not an identifier is quoted, like every other path', () => {
    expect(validateModelRequest(req({ 'x-extra': 1 }))?.field).toBe('["x-extra"]')
    expect(validateModelRequest(req({ metadata: { purpose: 'title', 'trace-id': 'x' } }))?.field).toBe(
      'metadata["trace-id"]',
    )
  })
})
