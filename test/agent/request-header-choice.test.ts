/**
 * The request header's `toolChoice` and `responseFormat`: canonical form, equality, the
 * `request/header` schema, and the loop's header building (a choice among no tools is dropped).
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { createSession, type RequestHeader, SessionEventError } from 'yoke'
import { buildRequestHeader, requestFromLog } from '../../src/agent/request-builder.js'
import { canonicalHeader, headerEquals } from '../../src/session/request-header.js'

const config = { provider: 'mock', model: 'm' }
const lookup = { name: 'lookup', description: 'Looks up.', parameters: { type: 'object' } }
const format = { type: 'json', schema: { type: 'object', properties: { a: { type: 'string' } } } } as const

describe('request header: toolChoice and responseFormat', () => {
  test("canonical form drops an 'auto' choice and keeps 'none', { name } and a response format", () => {
    expect(canonicalHeader({ config, tools: [lookup], toolChoice: 'auto' })).toEqual({ config, tools: [lookup] })
    expect(canonicalHeader({ config, tools: [lookup], toolChoice: 'none' })).toEqual({
      config,
      tools: [lookup],
      toolChoice: 'none',
    })
    expect(canonicalHeader({ config, responseFormat: format })).toEqual({ config, responseFormat: format })
  })

  test('equality: absent is auto; choices and formats compare by value', () => {
    const base: RequestHeader = { config, tools: [lookup] }
    expect(headerEquals(base, { ...base, toolChoice: 'auto' })).toBe(true)
    expect(headerEquals(base, { ...base, toolChoice: 'none' })).toBe(false)
    expect(headerEquals({ ...base, toolChoice: { name: 'lookup' } }, { ...base, toolChoice: { name: 'lookup' } })).toBe(
      true,
    )
    expect(headerEquals({ ...base, toolChoice: { name: 'lookup' } }, { ...base, toolChoice: 'required' })).toBe(false)
    const reordered = { type: 'json', schema: { properties: { a: { type: 'string' } }, type: 'object' } } as const
    expect(headerEquals({ ...base, responseFormat: format }, { ...base, responseFormat: reordered })).toBe(true)
    expect(headerEquals({ ...base, responseFormat: format }, base)).toBe(false)
    expect(
      headerEquals({ ...base, responseFormat: format }, { ...base, responseFormat: { ...format, name: 'x' } }),
    ).toBe(false)
  })

  test('the loop never sends a tool choice without tools', () => {
    expect(buildRequestHeader({ config, tools: [], toolChoice: 'none' })).toEqual({ config })
    expect(buildRequestHeader({ config, tools: [lookup], toolChoice: 'none', responseFormat: format })).toEqual({
      config,
      tools: [lookup],
      toolChoice: 'none',
      responseFormat: format,
    })
  })

  test('a logged header with both fields states a request with both, and an old header without them still folds', () => {
    const session = createSession({ id: 's1' })
    session.append('turn/start', { turn: 1 })
    session.append('request/header', { header: { config, tools: [lookup] }, reason: 'initial' })
    expect(requestFromLog(session)).not.toHaveProperty('toolChoice')
    session.append('request/header', {
      header: { config, tools: [lookup], toolChoice: 'none', responseFormat: format },
      reason: 'change',
    })
    const body = requestFromLog(session)
    expect(body?.toolChoice).toBe('none')
    expect(body?.responseFormat).toEqual(format)
    expect(Object.keys(body ?? {})).toEqual([
      'provider',
      'model',
      'tools',
      'toolChoice',
      'responseFormat',
      'messages',
      'metadata',
    ])
  })

  test.each([
    ['an unknown choice', { toolChoice: 'sometimes' }, 'data.header.toolChoice'],
    ['an empty tool name', { toolChoice: { name: '' } }, 'data.header.toolChoice'],
    ['a format of another type', { responseFormat: { type: 'xml', schema: {} } }, 'data.header.responseFormat'],
  ] as const)('a request/header with %s is refused', (_name, extra, path) => {
    const session = createSession({ id: 's1' })
    session.append('turn/start', { turn: 1 })
    let caught: unknown
    try {
      // Deliberately outside the type: the schema is what refuses it.
      const header = { config, tools: [lookup], ...extra } as unknown as RequestHeader
      session.append('request/header', { header, reason: 'initial' })
    } catch (error) {
      caught = error
    }
    expect(SessionEventError.is(caught)).toBe(true)
    expect((caught as SessionEventError).path).toContain(path)
    expect(session.length).toBe(1)
  })
})
