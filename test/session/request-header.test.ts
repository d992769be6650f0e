import { describe, expect, expectTypeOf, test } from 'vitest'
import type { z } from 'zod'
import { accessPath, payloadIssues } from '../../src/session/payload-issues.js'
import {
  type AdapterDefaults,
  type adapterDefaultsSchema,
  type CallConfig,
  type callConfigSchema,
  canonicalHeader,
  foldRequestHeader,
  headerEquals,
  type RequestHeader,
  requestHeaderSchema,
  type ToolSchema,
  type toolSchemaSchema,
} from '../../src/session/request-header.js'
import type { SessionEvent } from '../../src/session/session-event.js'

/** `INVALID_PAYLOAD.path` of a `request/header` whose header is `header`, or `undefined` when valid. */
function headerPath(header: unknown): string | undefined {
  const issues = payloadIssues(requestHeaderSchema, header)
  return issues === undefined ? undefined : accessPath('data.header', issues[0]!.path)
}

const config: CallConfig = { provider: 'mock', model: 'm' }
const readTool: ToolSchema = {
  name: 'read',
  description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}
const writeTool: ToolSchema = { name: 'write', description: 'Writes a file', parameters: { type: 'object' } }
const full: RequestHeader = {
  config: { provider: 'mock', model: 'm', reasoningEffort: 'high', temperature: 0.5, maxTokens: 100, stop: ['END'] },
  adapterDefaults: { reasoningEffort: true, maxTokens: true },
  system: 'You are terse.',
  tools: [readTool, writeTool],
}

let nextSeq = 0
function event(type: string, data: unknown): SessionEvent<string, unknown> {
  return { type, seq: nextSeq++, time: 1000, data }
}

describe('types line up with schemas', () => {
  test('every exported schema infers exactly its hand-written interface', () => {
    expectTypeOf<z.infer<typeof callConfigSchema>>().toEqualTypeOf<CallConfig>()
    expectTypeOf<z.infer<typeof adapterDefaultsSchema>>().toEqualTypeOf<AdapterDefaults>()
    expectTypeOf<z.infer<typeof toolSchemaSchema>>().toEqualTypeOf<ToolSchema>()
    expectTypeOf<z.infer<typeof requestHeaderSchema>>().toEqualTypeOf<RequestHeader>()
    const parsed: RequestHeader = requestHeaderSchema.parse(full)
    expect(parsed).toEqual(full)
  })
})

describe('requestHeaderSchema', () => {
  test.each<[string, RequestHeader]>([
    ['the minimal header', { config }],
    ['a fully populated header', full],
    [
      'maxTokens marked as an adapter default',
      { config: { ...config, maxTokens: 100 }, adapterDefaults: { maxTokens: true } },
    ],
    ['empty adapterDefaults, system and tools', { config, adapterDefaults: {}, system: '', tools: [] }],
    ['temperature 0 and empty stop', { config: { ...config, temperature: 0, stop: [] } }],
    ['a temperature above 2', { config: { ...config, temperature: 7 } }],
    ['empty stop strings', { config: { ...config, stop: [''] } }],
    ['an empty tool description', { config, tools: [{ name: 't', description: '', parameters: {} }] }],
  ])('accepts %s', (_name, header) => {
    expect(payloadIssues(requestHeaderSchema, header)).toBeUndefined()
  })

  test.each<[string, unknown]>([
    ['null', null],
    ['an array', []],
    ['unknown', { unknown: true }],
    ['maxTokens false', { maxTokens: false }],
    ['reasoningEffort true without config.reasoningEffort', { reasoningEffort: true }],
    ['maxTokens 1', { maxTokens: 1 }],
    ['a string', 'maxTokens'],
  ])('adapterDefaults %s is rejected under data.header.adapterDefaults', (_name, adapterDefaults) => {
    const path = headerPath({ config: { ...config, maxTokens: 100 }, adapterDefaults })
    expect(path?.startsWith('data.header.adapterDefaults')).toBe(true)
  })

  test('a marker without its config field names the marker', () => {
    expect(headerPath({ config, adapterDefaults: { maxTokens: true } })).toBe('data.header.adapterDefaults.maxTokens')
    expect(headerPath({ config: { ...config, maxTokens: 5 }, adapterDefaults: { reasoningEffort: true } })).toBe(
      'data.header.adapterDefaults.reasoningEffort',
    )
    expect(headerPath({ config, adapterDefaults: { unknown: true } })).toBe('data.header.adapterDefaults.unknown')
  })

  test.each<[string, unknown, string]>([
    ['a missing config', {}, 'data.header.config'],
    ['a missing provider', { config: { model: 'm' } }, 'data.header.config.provider'],
    ['an empty provider', { config: { provider: '', model: 'm' } }, 'data.header.config.provider'],
    ['an empty model', { config: { provider: 'p', model: '' } }, 'data.header.config.model'],
    ['an empty reasoningEffort', { config: { ...config, reasoningEffort: '' } }, 'data.header.config.reasoningEffort'],
    ['a negative temperature', { config: { ...config, temperature: -0.1 } }, 'data.header.config.temperature'],
    [
      'an infinite temperature',
      { config: { ...config, temperature: Number.POSITIVE_INFINITY } },
      'data.header.config.temperature',
    ],
    ['a string temperature', { config: { ...config, temperature: '1' } }, 'data.header.config.temperature'],
    ['maxTokens 0', { config: { ...config, maxTokens: 0 } }, 'data.header.config.maxTokens'],
    ['maxTokens 1.5', { config: { ...config, maxTokens: 1.5 } }, 'data.header.config.maxTokens'],
    ['maxTokens 2**53', { config: { ...config, maxTokens: 2 ** 53 } }, 'data.header.config.maxTokens'],
    ['a string stop', { config: { ...config, stop: 'END' } }, 'data.header.config.stop'],
    ['a numeric stop entry', { config: { ...config, stop: ['a', 1] } }, 'data.header.config.stop[1]'],
    ['an unknown config key', { config: { ...config, topP: 1 } }, 'data.header.config.topP'],
    ['an unknown header key', { config, messages: [] }, 'data.header.messages'],
    ['a numeric system', { config, system: 1 }, 'data.header.system'],
    ['tools as an object', { config, tools: {} }, 'data.header.tools'],
    [
      'a tool without parameters',
      { config, tools: [{ name: 't', description: 'd' }] },
      'data.header.tools[0].parameters',
    ],
    [
      'array parameters',
      { config, tools: [{ name: 't', description: 'd', parameters: [] }] },
      'data.header.tools[0].parameters',
    ],
    [
      'null parameters',
      { config, tools: [{ name: 't', description: 'd', parameters: null }] },
      'data.header.tools[0].parameters',
    ],
    [
      'an empty tool name',
      { config, tools: [{ name: '', description: 'd', parameters: {} }] },
      'data.header.tools[0].name',
    ],
    ['an unknown tool key', { config, tools: [{ ...readTool, strict: true }] }, 'data.header.tools[0].strict'],
    [
      'a duplicate tool name',
      { config, tools: [readTool, writeTool, { ...readTool, description: 'again' }] },
      'data.header.tools[2].name',
    ],
  ])('rejects %s', (_name, header, path) => {
    expect(headerPath(header)).toBe(path)
  })
})

describe('canonicalHeader', () => {
  test('drops empty adapterDefaults, system and tools', () => {
    expect(canonicalHeader({ config, adapterDefaults: {}, system: '', tools: [] })).toStrictEqual({ config })
  })

  test('leaves a fully populated header unchanged, sharing its parts', () => {
    const canonical = canonicalHeader(full)
    expect(canonical).toStrictEqual(full)
    expect(Object.keys(canonical)).toEqual(['config', 'adapterDefaults', 'system', 'tools'])
    expect(canonical.config).toBe(full.config)
    expect(canonical.tools).toBe(full.tools)
  })

  test('keeps each part that carries something', () => {
    expect(
      canonicalHeader({ config: { ...config, maxTokens: 9 }, adapterDefaults: { maxTokens: true }, tools: [] }),
    ).toStrictEqual({
      config: { ...config, maxTokens: 9 },
      adapterDefaults: { maxTokens: true },
    })
    expect(canonicalHeader({ config, system: 'x', tools: [readTool] })).toStrictEqual({
      config,
      system: 'x',
      tools: [readTool],
    })
  })

  test('returns a new object and never modifies its argument', () => {
    const header = Object.freeze({ config, system: '' })
    const canonical = canonicalHeader(header)
    expect(canonical).not.toBe(header)
    expect(header).toStrictEqual({ config, system: '' })
  })
})

describe('headerEquals', () => {
  test.each<[string, RequestHeader]>([
    ['another model', { ...full, config: { ...full.config, model: 'other' } }],
    ['another provider', { ...full, config: { ...full.config, provider: 'other' } }],
    ['another temperature', { ...full, config: { ...full.config, temperature: 0.6 } }],
    ['another maxTokens', { ...full, config: { ...full.config, maxTokens: 101 } }],
    ['another stop', { ...full, config: { ...full.config, stop: ['STOP'] } }],
    ['a longer stop', { ...full, config: { ...full.config, stop: ['END', 'STOP'] } }],
    ['another system', { ...full, system: 'You are verbose.' }],
    ['a dropped marker', { ...full, adapterDefaults: { maxTokens: true } }],
    ['a changed tool description', { ...full, tools: [{ ...readTool, description: 'Reads' }, writeTool] }],
    ['changed tool parameters', { ...full, tools: [{ ...readTool, parameters: { type: 'object' } }, writeTool] }],
    ['swapped tools', { ...full, tools: [writeTool, readTool] }],
    ['one tool fewer', { ...full, tools: [readTool] }],
  ])('is false for %s', (_name, other) => {
    expect(headerEquals(full, other)).toBe(false)
    expect(headerEquals(other, full)).toBe(false)
  })

  test('is false for an added reasoningEffort, an added adapterDefaults.maxTokens and [] vs one tool', () => {
    const base: RequestHeader = { config: { ...config, maxTokens: 100 } }
    expect(headerEquals(base, { config: { ...base.config, reasoningEffort: 'high' } })).toBe(false)
    expect(headerEquals(base, { ...base, adapterDefaults: { maxTokens: true } })).toBe(false)
    expect(headerEquals({ ...base, tools: [] }, { ...base, tools: [readTool] })).toBe(false)
    expect(headerEquals(base, { config: { ...base.config, stop: [] } })).toBe(false)
  })

  test('is true for a structuredClone and for absent vs empty parts', () => {
    expect(headerEquals(full, structuredClone(full))).toBe(true)
    expect(headerEquals({ config }, { config, tools: [] })).toBe(true)
    expect(headerEquals({ config }, { config, system: '' })).toBe(true)
    expect(headerEquals({ config }, { config, adapterDefaults: {} })).toBe(true)
    expect(headerEquals({ config }, canonicalHeader({ config, adapterDefaults: {}, system: '', tools: [] }))).toBe(true)
  })

  test('ignores key order in config and in tool parameters', () => {
    const reordered: RequestHeader = {
      tools: [
        {
          parameters: { required: ['path'], properties: { path: { type: 'string' } }, type: 'object' },
          description: 'Reads a file',
          name: 'read',
        },
        writeTool,
      ],
      system: full.system!,
      adapterDefaults: { maxTokens: true, reasoningEffort: true },
      config: {
        stop: ['END'],
        maxTokens: 100,
        temperature: 0.5,
        reasoningEffort: 'high',
        model: 'm',
        provider: 'mock',
      },
    }
    expect(headerEquals(full, reordered)).toBe(true)
  })
})

describe('foldRequestHeader', () => {
  const first: RequestHeader = { config, system: '', tools: [] }
  const second: RequestHeader = { config: { ...config, model: 'm2' }, system: 'x' }

  test('is undefined for a log without request/header and no starting fold', () => {
    expect(foldRequestHeader([])).toBeUndefined()
    expect(
      foldRequestHeader([event('turn/start', { turn: 1 }), event('request/context', { provider: 'mock', model: 'm' })]),
    ).toBeUndefined()
  })

  test('returns `from` itself when the events hold no request/header', () => {
    expect(foldRequestHeader([], full)).toBe(full)
    expect(foldRequestHeader([event('step/start', { turn: 1, step: 1 })], full)).toBe(full)
  })

  test('takes the canonical form of the last request/header, ignoring `from`', () => {
    const events = [
      event('turn/start', { turn: 1 }),
      event('request/header', { header: first, reason: 'initial' }),
      event('request/context', { provider: 'mock', model: 'm' }),
    ]
    expect(foldRequestHeader(events)).toStrictEqual({ config })
    expect(foldRequestHeader(events, full)).toStrictEqual({ config })
    const later = [...events, event('request/header', { header: second, reason: 'change' }), event('test/note', {})]
    expect(foldRequestHeader(later)).toStrictEqual(second)
  })

  test('folding in pieces equals folding at once', () => {
    const events = [
      event('request/header', { header: full, reason: 'initial' }),
      event('turn/end', { turn: 1, reason: { kind: 'completed' } }),
      event('request/header', { header: second, reason: 'resume' }),
    ]
    const whole = foldRequestHeader(events)
    const stepwise = events.reduce<RequestHeader | undefined>(
      (fold, next) => foldRequestHeader([next], fold),
      undefined,
    )
    expect(stepwise).toStrictEqual(whole)
  })
})
