/**
 * The loop request object: its exact shape and key order, deep freezing that
 * stops at frozen objects and spares the signal, and the per-harness loop-request marks.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { buildLoopRequest, createLoopRequestMarks, type Message, type RequestHeader, type ToolSchema } from 'yoke'

const hi: Message = Object.freeze({
  id: 'u-hi',
  role: 'user',
  content: Object.freeze([Object.freeze({ type: 'text', text: 'hi' })]),
  source: Object.freeze({ kind: 'user' }),
}) as Message
const messages: readonly Message[] = Object.freeze([hi])

function echoTool(): ToolSchema {
  return {
    name: 'echo',
    description: 'Echoes its text.',
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
  }
}

function fullHeader(): RequestHeader {
  return {
    config: {
      provider: 'mock',
      model: 'm1',
      reasoningEffort: 'high',
      temperature: 0.5,
      maxTokens: 4096,
      stop: ['END'],
    },
    adapterDefaults: { maxTokens: true },
    system: 'Be brief.',
    tools: [echoTool()],
  }
}

describe('buildLoopRequest', () => {
  test('is {...config, system, tools, messages, metadata, signal} in that key order, without adapterDefaults', () => {
    const signal = new AbortController().signal
    const header = fullHeader()
    const request = buildLoopRequest({ header, messages, sessionId: 's1', signal, marks: createLoopRequestMarks() })
    expect(Object.keys(request)).toEqual([
      'provider',
      'model',
      'reasoningEffort',
      'temperature',
      'maxTokens',
      'stop',
      'system',
      'tools',
      'messages',
      'metadata',
      'signal',
    ])
    expect(request).toEqual({
      provider: 'mock',
      model: 'm1',
      reasoningEffort: 'high',
      temperature: 0.5,
      maxTokens: 4096,
      stop: ['END'],
      system: 'Be brief.',
      tools: [echoTool()],
      messages: [hi],
      metadata: { sessionId: 's1', purpose: 'conversation' },
      signal,
    })
    expect(Object.keys(request.metadata)).toEqual(['sessionId', 'purpose'])
    expect(request.messages).toBe(messages)
    expect(request.signal).toBe(signal)
  })

  test('a header without system and tools gives neither key; empty ones are left out too', () => {
    const marks = createLoopRequestMarks()
    const signal = new AbortController().signal
    const bare = buildLoopRequest({
      header: { config: { provider: 'p', model: 'm' } },
      messages: [],
      sessionId: 's1',
      signal,
      marks,
    })
    expect(Object.keys(bare)).toEqual(['provider', 'model', 'messages', 'metadata', 'signal'])
    const empty = buildLoopRequest({
      header: { config: { provider: 'p', model: 'm' }, system: '', tools: [] },
      messages: [],
      sessionId: 's1',
      signal,
      marks,
    })
    expect(Object.keys(empty)).toEqual(['provider', 'model', 'messages', 'metadata', 'signal'])
  })

  test('the request and everything in it are frozen, the signal excepted, which still aborts', () => {
    const controller = new AbortController()
    const header = fullHeader()
    const request = buildLoopRequest({
      header,
      messages,
      sessionId: 's1',
      signal: controller.signal,
      marks: createLoopRequestMarks(),
    })
    expect(Object.isFrozen(request)).toBe(true)
    expect(Object.isFrozen(request.metadata)).toBe(true)
    expect(Object.isFrozen(request.stop)).toBe(true)
    expect(Object.isFrozen(request.tools)).toBe(true)
    const tool = request.tools?.[0]
    expect(Object.isFrozen(tool)).toBe(true)
    expect(Object.isFrozen(tool?.parameters)).toBe(true)
    expect(Object.isFrozen(tool?.parameters['properties'])).toBe(true)
    expect(Object.isFrozen(request.signal)).toBe(false)
    expect(() => {
      ;(request as { model: string }).model = 'x'
    }).toThrow(TypeError)
    expect(() => (request.messages as Message[]).push(hi)).toThrow(TypeError)
    controller.abort('stop')
    expect(request.signal.aborted).toBe(true)
    expect(request.signal.reason).toBe('stop')
  })

  test('an undefined value inside a mutable part does not stop the freezing', () => {
    const nested = { type: 'string' }
    const parameters = { properties: { text: nested }, note: undefined } as unknown as ToolSchema['parameters']
    const request = buildLoopRequest({
      header: { config: { provider: 'p', model: 'm' }, tools: [{ name: 'echo', description: 'd', parameters }] },
      messages: [],
      sessionId: 's1',
      signal: new AbortController().signal,
      marks: createLoopRequestMarks(),
    })
    expect(Object.isFrozen(request.tools?.[0]?.parameters)).toBe(true)
    expect(Object.isFrozen(nested)).toBe(true)
  })

  test('freezing happens in place and stops at objects that are already frozen', () => {
    const inner = { type: 'object' }
    const shallow = Object.freeze([{ name: 'echo', description: 'd', parameters: inner }])
    const request = buildLoopRequest({
      header: { config: { provider: 'p', model: 'm' }, tools: shallow },
      messages: [],
      sessionId: 's1',
      signal: new AbortController().signal,
      marks: createLoopRequestMarks(),
    })
    expect(request.tools).toBe(shallow)
    expect(Object.isFrozen(shallow[0])).toBe(false)
    expect(Object.isFrozen(inner)).toBe(false)
    const unfrozenMessages: Message[] = []
    const second = buildLoopRequest({
      header: { config: { provider: 'p', model: 'm' } },
      messages: unfrozenMessages,
      sessionId: 's1',
      signal: new AbortController().signal,
      marks: createLoopRequestMarks(),
    })
    expect(second.messages).toBe(unfrozenMessages)
    expect(Object.isFrozen(unfrozenMessages)).toBe(true)
  })
})

describe('loop-request marks', () => {
  test('a built request is marked in its own marks only', () => {
    const marks = createLoopRequestMarks()
    const others = createLoopRequestMarks()
    const request = buildLoopRequest({
      header: fullHeader(),
      messages,
      sessionId: 's1',
      signal: new AbortController().signal,
      marks,
    })
    expect(marks.isLoopRequest(request)).toBe(true)
    expect(others.isLoopRequest(request)).toBe(false)
  })

  test('copies, other objects and primitives are not loop requests', () => {
    const marks = createLoopRequestMarks()
    const request = buildLoopRequest({
      header: fullHeader(),
      messages,
      sessionId: 's1',
      signal: new AbortController().signal,
      marks,
    })
    expect(marks.isLoopRequest({ ...request })).toBe(false)
    expect(marks.isLoopRequest(Object.freeze({ ...request }))).toBe(false)
    expect(marks.isLoopRequest(request.metadata)).toBe(false)
    for (const value of [undefined, null, 1, 'request', true]) expect(marks.isLoopRequest(value)).toBe(false)
  })

  test('mark adds any object', () => {
    const marks = createLoopRequestMarks()
    const value = {}
    expect(marks.isLoopRequest(value)).toBe(false)
    marks.mark(value)
    expect(marks.isLoopRequest(value)).toBe(true)
  })
})
