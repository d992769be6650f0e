/**
 * The request builder's parts: the loop request object (its exact shape and key order, deep
 * freezing that stops at frozen objects and spares the signal, the per-harness loop-request
 * marks), the canonical header, when a `request/header` is due and with which reason, and when a
 * `request/context` differs; and the builder that logs them and builds each request from the log.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import { type Harness, LlmError, type Message, type RequestHeader, rebuildRequest, services } from 'yoke'
import type { CallConfig, ToolSchema } from '../../src/session/index.js'
import { scriptedModel } from 'yoke/testing'
import {
  buildLoopRequest,
  buildRequestContext,
  buildRequestHeader,
  createLoopRequestMarks,
  createRequestBuilder,
  requestContextDue,
  requestHeaderDecision,
} from '../../src/agent/request-builder.js'
import { SS, TS } from '../session/builders.js'
import { appendAll, freshHarness } from '../session/session-helpers.js'

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

const config: CallConfig = { provider: 'mock', model: 'm1', maxTokens: 4096 }
const echo: ToolSchema = { name: 'echo', description: 'Echoes its text.', parameters: { type: 'object' } }
const header: RequestHeader = { config, adapterDefaults: { maxTokens: true }, system: 'Be brief.', tools: [echo] }

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
})

describe('buildRequestHeader', () => {
  test('keeps config, markers, a non-empty system and non-empty tools, in that order', () => {
    const built = buildRequestHeader({
      tools: [echo],
      system: 'Be brief.',
      adapterDefaults: { maxTokens: true },
      config,
    })
    expect(built).toEqual(header)
    expect(Object.keys(built)).toEqual(['config', 'adapterDefaults', 'system', 'tools'])
    expect(built.config).toBe(config)
  })

  test('omits an empty system, empty tools and markers without a marker', () => {
    expect(buildRequestHeader({ config, adapterDefaults: {}, system: '', tools: [] })).toEqual({ config })
    expect(buildRequestHeader({ config, adapterDefaults: undefined, system: undefined, tools: undefined })).toEqual({
      config,
    })
  })
})

describe('requestHeaderDecision', () => {
  test('the first request over a log without a header is initial', () => {
    expect(requestHeaderDecision({ folded: undefined, firstRequestOfDriver: true, header })).toEqual({
      reason: 'initial',
    })
  })

  test('the first request over a log with a header is resume, even when equal', () => {
    expect(requestHeaderDecision({ folded: header, firstRequestOfDriver: true, header })).toEqual({ reason: 'resume' })
    expect(requestHeaderDecision({ folded: { config }, firstRequestOfDriver: true, header })).toEqual({
      reason: 'resume',
    })
  })

  test('a later request with an equal header logs nothing', () => {
    expect(requestHeaderDecision({ folded: header, firstRequestOfDriver: false, header })).toBeUndefined()
    const copy: RequestHeader = structuredClone(header)
    expect(requestHeaderDecision({ folded: copy, firstRequestOfDriver: false, header })).toBeUndefined()
  })

  test('absent and empty system or tools are equal', () => {
    const folded: RequestHeader = { config }
    expect(
      requestHeaderDecision({ folded, firstRequestOfDriver: false, header: { config, system: '', tools: [] } }),
    ).toBeUndefined()
  })

  test.each<[string, RequestHeader]>([
    ['a model switch', { ...header, config: { ...config, model: 'other-model' } }],
    ['a new temperature', { ...header, config: { ...config, temperature: 0 } }],
    ['a different stop list', { ...header, config: { ...config, stop: ['END'] } }],
    ['a dropped adapter-default marker', { config, system: 'Be brief.', tools: [echo] }],
    ['a changed system', { ...header, system: 'Be verbose.' }],
    ['a removed system', { config, adapterDefaults: { maxTokens: true }, tools: [echo] }],
    ['a changed tool description', { ...header, tools: [{ ...echo, description: 'Repeats.' }] }],
    ['an added tool', { ...header, tools: [echo, { ...echo, name: 'echo2' }] }],
  ])('a later request with %s logs change', (_name, next) => {
    expect(requestHeaderDecision({ folded: header, firstRequestOfDriver: false, header: next })).toEqual({
      reason: 'change',
    })
  })

  test('a later request over a log without a header logs initial', () => {
    expect(requestHeaderDecision({ folded: undefined, firstRequestOfDriver: false, header })).toEqual({
      reason: 'initial',
    })
  })

  test('each decided reason passes the session reason rule against the folded header', async () => {
    const harness = await freshHarness()
    harnesses.push(harness)
    const session = appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
    const changed: RequestHeader = { ...header, system: 'Be verbose.' }
    const plan: [boolean, RequestHeader, string | undefined][] = [
      [true, header, 'initial'],
      [false, header, undefined],
      [false, changed, 'change'],
      [true, changed, 'resume'],
      [false, header, 'change'],
    ]
    const reasons: (string | undefined)[] = []
    for (const [firstRequestOfDriver, next] of plan) {
      const due = requestHeaderDecision({ folded: session.requestHeader(), firstRequestOfDriver, header: next })
      reasons.push(due?.reason)
      if (due !== undefined) session.append('request/header', { header: next, reason: due.reason })
    }
    expect(reasons).toEqual(plan.map(([, , reason]) => reason))
    expect(session.events.filter((event) => event.type === 'request/header').map((event) => event.data)).toEqual([
      { header, reason: 'initial' },
      { header: changed, reason: 'change' },
      { header: changed, reason: 'resume' },
      { header, reason: 'change' },
    ])
  })
})

describe('request/context', () => {
  test('buildRequestContext takes the route and the reported context window', () => {
    expect(buildRequestContext(config, { contextWindow: 128000, defaultMaxTokens: 4096 })).toEqual({
      provider: 'mock',
      model: 'm1',
      contextWindow: 128000,
    })
    expect(buildRequestContext(config, {})).toEqual({ provider: 'mock', model: 'm1' })
    expect(Object.keys(buildRequestContext(config))).toEqual(['provider', 'model'])
  })

  test('is due when none was logged', () => {
    expect(requestContextDue(undefined, { provider: 'mock', model: 'm1' })).toBe(true)
  })

  test('is not due when equal to the folded one', () => {
    expect(
      requestContextDue(
        { provider: 'mock', model: 'm1', contextWindow: 8 },
        { provider: 'mock', model: 'm1', contextWindow: 8 },
      ),
    ).toBe(false)
    expect(requestContextDue({ provider: 'mock', model: 'm1' }, { provider: 'mock', model: 'm1' })).toBe(false)
  })

  test.each([
    ['the provider', { provider: 'other', model: 'm1', contextWindow: 8 }],
    ['the model', { provider: 'mock', model: 'm2', contextWindow: 8 }],
    ['the context window', { provider: 'mock', model: 'm1', contextWindow: 16 }],
    ['a lost context window', { provider: 'mock', model: 'm1' }],
  ])('is due when %s differs', (_name, context) => {
    expect(requestContextDue({ provider: 'mock', model: 'm1', contextWindow: 8 }, context)).toBe(true)
  })

  test('a new context window is due', () => {
    expect(
      requestContextDue({ provider: 'mock', model: 'm1' }, { provider: 'mock', model: 'm1', contextWindow: 8 }),
    ).toBe(true)
  })

  test('header equality ignores request/context: a context change alone logs no header', async () => {
    const harness = await freshHarness()
    harnesses.push(harness)
    const session = appendAll(harness.sessions.create(), [TS(1)])
    session.append('request/header', { header, reason: 'initial' })
    session.append('request/context', { provider: 'mock', model: 'm1', contextWindow: 8 })
    const next = { provider: 'mock', model: 'm1', contextWindow: 16 }
    expect(requestContextDue(session.requestContext(), next)).toBe(true)
    expect(
      requestHeaderDecision({ folded: session.requestHeader(), firstRequestOfDriver: false, header }),
    ).toBeUndefined()
  })
})

describe('createRequestBuilder', () => {
  async function builderSession(verify?: (request: unknown) => void) {
    const harness = await freshHarness({ model: scriptedModel([], { provider: 'mock', model: 'm1' }) })
    harnesses.push(harness)
    const session = harness.sessions.create()
    appendAll(session, [TS(1), SS(1, 1)])
    const marks = createLoopRequestMarks()
    const builder = createRequestBuilder({
      session,
      options: { provider: 'mock', model: 'm1', temperature: 0.5 },
      models: harness.ctx.get(services.models),
      scope: harness.ctx,
      marks,
      ...(verify === undefined ? {} : { verify }),
    })
    return { session, marks, builder }
  }

  test('the live request is built from the log: what rebuildRequest returns for the attempt, plus the signal', async () => {
    const { session, marks, builder } = await builderSession()
    const seed = builder.seed()
    expect(seed).toEqual({ provider: 'mock', model: 'm1', temperature: 0.5 })
    const signal = new AbortController().signal
    const { call, request } = builder.build({
      chosen: seed,
      turn: 1,
      step: 1,
      attempt: 1,
      system: 'Be brief.',
      tools: [echo],
      signal,
    })
    expect(call.config).toMatchObject({ provider: 'mock', model: 'm1', temperature: 0.5 })
    expect(marks.isLoopRequest(request)).toBe(true)
    expect(Object.isFrozen(request)).toBe(true)
    expect(request.signal).toBe(signal)
    expect(request.tools).toBe(session.requestHeader()?.tools)
    expect(session.events.slice(-2).map((event) => event.type)).toEqual(['request/header', 'request/context'])
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } })
    const { signal: _signal, ...body } = request
    expect(rebuildRequest(session, { turn: 1, step: 1 })).toEqual(body)
  })

  test('only the first request of the builder logs a header over an equal one; a later change logs change', async () => {
    const { session, builder } = await builderSession()
    const attempt = { turn: 1, step: 1, system: 'Be brief.', tools: [echo], signal: new AbortController().signal }
    builder.build({ ...attempt, chosen: builder.seed(), attempt: 1 })
    const headers = () => session.events.filter((event) => event.type === 'request/header').length
    expect(headers()).toBe(1)
    builder.build({ ...attempt, chosen: builder.seed(), attempt: 2 })
    expect(headers()).toBe(1)
    builder.build({ ...attempt, chosen: builder.seed(), attempt: 3, system: 'Be terse.' })
    expect(session.events.filter((event) => event.type === 'request/header').map((event) => event.data)).toMatchObject([
      { reason: 'initial' },
      { reason: 'change', header: { system: 'Be terse.' } },
    ])
  })

  test('a chosen config that is not an object fails as an invalid request; verify sees every request before the adapter', async () => {
    const seen: unknown[] = []
    const { builder } = await builderSession((request) => seen.push(request))
    const attempt = { turn: 1, step: 1, attempt: 1, system: '', tools: [], signal: new AbortController().signal }
    expect(() => builder.build({ ...attempt, chosen: null as never })).toThrow(LlmError)
    const { call, request } = builder.build({ ...attempt, chosen: builder.seed() })
    // The empty script answers with an error chunk; what matters is that verify saw the request first.
    for await (const _chunk of call.stream(request));
    expect(seen).toEqual([request])
  })
})
