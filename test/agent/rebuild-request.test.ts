/**
 * Reconstruction: `rebuildRequest` over hand-built loop logs (a tool step, a
 * retried step, a header change, a reopened log) and `verifyReconstruction` for live, unmarked,
 * unfrozen and altered requests.
 *
 * @module
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  type Harness,
  InvalidArgumentError,
  type JsonObject,
  type ModelRequest,
  ReconstructionError,
  RequestNotFoundError,
  type RequestHeader,
  rebuildRequest,
  type Session,
  type StreamChunk,
} from 'yoke'
import { verifyReconstruction } from '../../src/agent/rebuild-request.js'
import {
  buildLoopRequest,
  buildRequestContext,
  buildRequestHeader,
  createLoopRequestMarks,
  type LoopRequestMarks,
  requestContextDue,
  requestHeaderDecision,
} from '../../src/agent/request-builder.js'
import { SE, SS, TC, TE, TR, TS, UM } from '../session/builders.js'
import { append, expectError, freshHarness } from '../session/session-helpers.js'

const echo = { name: 'echo', description: 'Echoes its text.', parameters: { type: 'object' } }
const helpful = buildRequestHeader({
  config: { provider: 'mock', model: 'm1', maxTokens: 4096 },
  adapterDefaults: { maxTokens: true },
  system: 'You are helpful.',
  tools: [echo],
})
const terse: RequestHeader = { ...helpful, system: 'You are terse.' }
const failure = { code: 'SERVER', message: 'down', retryable: true, phase: 'response' }

interface Coordinates {
  readonly turn: number
  readonly step: number
  readonly attempt: number
}

/** A hand-written loop log plus the requests built live at each request point. */
interface LoopLog {
  readonly session: Session
  readonly marks: LoopRequestMarks
  readonly requests: Map<string, ModelRequest>
}

const key = ({ turn, step, attempt }: Coordinates): string => `${turn}/${step}/${attempt}`

function withoutSignal(request: ModelRequest): Omit<ModelRequest, 'signal'> {
  const { signal: _signal, ...rest } = request
  return rest
}

/** Log the header and context when due, build the request from the live session and verify it (pending attempt). */
function requestPoint(
  log: LoopLog,
  header: RequestHeader,
  at: Coordinates,
  firstRequestOfDriver = false,
): ModelRequest {
  const { session, marks } = log
  const due = requestHeaderDecision({ folded: session.requestHeader(), firstRequestOfDriver, header })
  if (due !== undefined) session.append('request/header', { header, reason: due.reason })
  const context = buildRequestContext(header.config, { contextWindow: 128000 })
  if (requestContextDue(session.requestContext(), context)) session.append('request/context', context)
  const request = buildLoopRequest({
    header,
    messages: session.deriveMessages(),
    sessionId: session.id,
    signal: new AbortController().signal,
    marks,
  })
  verifyReconstruction(request, session, at, marks)
  log.requests.set(key(at), request)
  return request
}

/** Logs the chunks; returns their seqs. */
function stream(session: Session, turn: number, step: number, chunks: readonly StreamChunk[]): number[] {
  return chunks.map((chunk) => session.append('assistant/chunk', { turn, step, chunk }).seq)
}

/** The anchor citing the attempt's chunks. */
function answer(
  session: Session,
  turn: number,
  step: number,
  sources: readonly number[],
  content: readonly JsonObject[],
): void {
  session.append(
    'assistant/message',
    {
      turn,
      step,
      message: {
        id: `a-${session.length}`,
        role: 'assistant',
        content,
        source: { kind: 'model', provider: 'mock', model: 'm1' },
      },
    } as never,
    { surfaceOp: 'append', sourceEventSeqs: sources },
  )
}

function textChunks(text: string): StreamChunk[] {
  return [
    { type: 'text-delta', index: 0, text },
    { type: 'block-end', index: 0, block: { type: 'text', text } },
    { type: 'finish', reason: 'stop' },
  ]
}

/**
 * Turn 1: step 1 calls echo (c1), step 2 fails once (retried) and then answers. Turn 2: the system
 * prompt changes. Each request point builds and verifies the live request.
 */
function writeLog(session: Session): LoopLog {
  const log: LoopLog = { session, marks: createLoopRequestMarks(), requests: new Map() }
  const hi = UM('hi')
  session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [hi.data] } as never)
  for (const plan of [
    TS(1),
    {
      type: 'agent/inbox/spliced',
      data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
      options: {},
    },
    SS(1, 1),
    hi,
  ])
    append(session, plan)
  requestPoint(log, helpful, { turn: 1, step: 1, attempt: 1 }, true)
  const callChunks: StreamChunk[] = [
    { type: 'tool-call-delta', index: 0, id: 'c1', name: 'echo', argumentsDelta: '{}' },
    { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' } },
    { type: 'finish', reason: 'tool-calls' },
  ]
  answer(session, 1, 1, stream(session, 1, 1, callChunks), [
    { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' },
  ])
  const callSeq = append(session, TC(1, 1, 'c1')).seq
  append(session, TR(1, 1, 'c1', callSeq))
  append(session, SE(1, 1))
  append(session, SS(1, 2))
  requestPoint(log, helpful, { turn: 1, step: 2, attempt: 1 })
  stream(session, 1, 2, [
    { type: 'text-delta', index: 0, text: 'par' },
    { type: 'finish', reason: 'error', failure: failure as never },
  ])
  session.append('llm/retry', { retryId: 'r1', turn: 1, step: 2, attempt: 1, maxRetries: 5, delayMs: 500, failure })
  session.append('llm/retry-started', { retryId: 'r1', turn: 1, step: 2, attempt: 1 })
  requestPoint(log, helpful, { turn: 1, step: 2, attempt: 2 })
  answer(session, 1, 2, stream(session, 1, 2, textChunks('done')), [{ type: 'text', text: 'done' }])
  append(session, SE(1, 2))
  append(session, TE(1, 'completed'))
  for (const plan of [TS(2), SS(2, 1), UM('again')]) append(session, plan)
  requestPoint(log, terse, { turn: 2, step: 1, attempt: 1 })
  answer(session, 2, 1, stream(session, 2, 1, textChunks('ok')), [{ type: 'text', text: 'ok' }])
  append(session, SE(2, 1))
  append(session, TE(2, 'completed'))
  return log
}

function thrown(action: () => unknown): unknown {
  try {
    action()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

const attempts: readonly Coordinates[] = [
  { turn: 1, step: 1, attempt: 1 },
  { turn: 1, step: 2, attempt: 1 },
  { turn: 1, step: 2, attempt: 2 },
  { turn: 2, step: 1, attempt: 1 },
]

let harness: Harness
let log: LoopLog
beforeAll(async () => {
  harness = await freshHarness()
  log = writeLog(harness.sessions.create())
})
afterAll(async () => {
  await harness.close()
})

function recorded(at: Coordinates): ModelRequest {
  const request = log.requests.get(key(at))
  if (request === undefined) throw new Error(`no recorded request ${key(at)}`)
  return request
}

describe('rebuildRequest', () => {
  test.each(attempts)('turn $turn step $step attempt $attempt deep-equals the live request minus signal', (at) => {
    const rebuilt = rebuildRequest(log.session, at)
    expect(rebuilt).toStrictEqual(withoutSignal(recorded(at)))
    expect(Object.keys(rebuilt)).toEqual(Object.keys(recorded(at)).filter((name) => name !== 'signal'))
  })

  test('step 1 of turn 1 holds the prompt, the config with its adapter default, system and tools', () => {
    expect(rebuildRequest(log.session, { turn: 1, step: 1 })).toStrictEqual({
      provider: 'mock',
      model: 'm1',
      maxTokens: 4096,
      system: 'You are helpful.',
      tools: [echo],
      messages: [{ id: 'u-hi', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
      metadata: { sessionId: log.session.id, purpose: 'conversation' },
    })
  })

  test('the attempt defaults to 1', () => {
    expect(rebuildRequest(log.session, { turn: 1, step: 2 })).toStrictEqual(
      rebuildRequest(log.session, { turn: 1, step: 2, attempt: 1 }),
    )
  })

  test('the second step carries the assistant call and the tool result', () => {
    const messages = rebuildRequest(log.session, { turn: 1, step: 2 }).messages
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(messages[2]?.content).toEqual([
      { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }] },
    ])
  })

  test('attempt 2 after a failed attempt 1 has the same messages; the failed chunks stay uncited', () => {
    const first = rebuildRequest(log.session, { turn: 1, step: 2, attempt: 1 })
    const second = rebuildRequest(log.session, { turn: 1, step: 2, attempt: 2 })
    expect(second).toStrictEqual(first)
    const cited = log.session.events.flatMap((event) => event.sourceEventSeqs ?? [])
    const failedChunks = log.session.events.filter(
      (event) => event.type === 'assistant/chunk' && JSON.stringify(event.data).includes('"par"'),
    )
    expect(failedChunks).toHaveLength(1)
    expect(cited).not.toContain(failedChunks[0]?.seq)
  })

  test('a header change between turns shows in the later request only', () => {
    expect(rebuildRequest(log.session, { turn: 1, step: 2, attempt: 2 }).system).toBe('You are helpful.')
    const turn2 = rebuildRequest(log.session, { turn: 2, step: 1 })
    expect(turn2.system).toBe('You are terse.')
    expect(turn2.messages.map((message) => message.content[0])).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' },
      { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }] },
      { type: 'text', text: 'done' },
      { type: 'text', text: 'again' },
    ])
    expect(
      log.session.events
        .filter((event) => event.type === 'request/header')
        .map((event) => (event.data as JsonObject)['reason']),
    ).toEqual(['initial', 'change'])
  })

  test('the result is deep-frozen and the session is left unchanged', () => {
    const length = log.session.length
    const events = log.session.events
    const rebuilt = rebuildRequest(log.session, { turn: 1, step: 2 })
    expect(Object.isFrozen(rebuilt)).toBe(true)
    expect(Object.isFrozen(rebuilt.metadata)).toBe(true)
    expect(Object.isFrozen(rebuilt.messages)).toBe(true)
    expect(Object.isFrozen(rebuilt.messages[0])).toBe(true)
    expect(Object.isFrozen(rebuilt.tools?.[0]?.parameters)).toBe(true)
    expect(log.session.length).toBe(length)
    expect(log.session.events).toBe(events)
  })

  test.each([
    { turn: 1, step: 1, attempt: 2 },
    { turn: 1, step: 2, attempt: 3 },
    { turn: 1, step: 3, attempt: 1 },
    { turn: 3, step: 1, attempt: 1 },
  ])('turn $turn step $step attempt $attempt throws RequestNotFoundError', (at) => {
    expectError(
      thrown(() => rebuildRequest(log.session, at)),
      RequestNotFoundError,
      'REQUEST_NOT_FOUND',
      at,
    )
  })

  test.each([
    ['attempt', { turn: 1, step: 1, attempt: 0 }],
    ['step', { turn: 1, step: 1.5 }],
    ['turn', { turn: -1, step: 1 }],
  ])('a %s that is not a positive safe integer throws InvalidArgumentError', (name, at) => {
    expectError(
      thrown(() => rebuildRequest(log.session, at)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: `coordinates.${name}` },
    )
  })

  test('the open step pending its first chunk is not a logged attempt', async () => {
    const local = await freshHarness()
    try {
      const session = local.sessions.create()
      for (const plan of [TS(1), SS(1, 1), UM('hi')]) append(session, plan)
      session.append('request/header', { header: helpful, reason: 'initial' })
      expectError(
        thrown(() => rebuildRequest(session, { turn: 1, step: 1 })),
        RequestNotFoundError,
        'REQUEST_NOT_FOUND',
        { turn: 1, step: 1, attempt: 1 },
      )
    } finally {
      await local.close()
    }
  })

  test('chunks without any logged header cannot be rebuilt', async () => {
    const local = await freshHarness()
    try {
      const session = local.sessions.create()
      for (const plan of [TS(1), SS(1, 1), UM('hi')]) append(session, plan)
      stream(session, 1, 1, textChunks('x'))
      expectError(
        thrown(() => rebuildRequest(session, { turn: 1, step: 1 })),
        RequestNotFoundError,
        'REQUEST_NOT_FOUND',
        { turn: 1, step: 1, attempt: 1 },
      )
    } finally {
      await local.close()
    }
  })

  test('a reopened log (with its end-seed marker) rebuilds the same requests and continues with a resume header', async () => {
    const other = await freshHarness()
    try {
      const reopened = other.sessions.create({ id: log.session.id, seed: log.session.events })
      expect(reopened.at(reopened.length - 1)?.type).toBe('session/end-seed')
      for (const at of attempts) expect(rebuildRequest(reopened, at)).toStrictEqual(withoutSignal(recorded(at)))
      const resumed: LoopLog = { session: reopened, marks: createLoopRequestMarks(), requests: new Map() }
      for (const plan of [TS(3), SS(3, 1), UM('back')]) append(reopened, plan)
      const live = requestPoint(resumed, terse, { turn: 3, step: 1, attempt: 1 }, true)
      expect(reopened.requestHeader()).toEqual(terse)
      expect(reopened.events.filter((event) => event.type === 'request/header').at(-1)?.data).toEqual({
        header: terse,
        reason: 'resume',
      })
      stream(reopened, 3, 1, textChunks('welcome back'))
      expect(rebuildRequest(reopened, { turn: 3, step: 1 })).toStrictEqual(withoutSignal(live))
      expect(live.messages.at(-1)?.content).toEqual([{ type: 'text', text: 'back' }])
    } finally {
      await other.close()
    }
  })
})

describe('verifyReconstruction', () => {
  test('live requests pass while pending (in writeLog) and once their chunks are logged', async () => {
    const local = await freshHarness()
    try {
      const fresh = writeLog(local.sessions.create())
      expect([...fresh.requests.keys()]).toEqual(attempts.map(key))
      for (const at of attempts)
        expect(() => verifyReconstruction(fresh.requests.get(key(at)), fresh.session, at, fresh.marks)).not.toThrow()
    } finally {
      await local.close()
    }
  })

  test('an unmarked request fails at $', () => {
    const at = { turn: 1, step: 1, attempt: 1 }
    const copy = Object.freeze({ ...recorded(at) })
    const error = expectError(
      thrown(() => verifyReconstruction(copy, log.session, at, log.marks)),
      ReconstructionError,
      'RECONSTRUCTION_MISMATCH',
      { path: '$', actual: copy },
    )
    expect(error.message).toContain('not one the agent loop built')
    expect(thrown(() => verifyReconstruction(recorded(at), log.session, at, createLoopRequestMarks()))).toMatchObject({
      path: '$',
    })
  })

  test('a marked but unfrozen request fails at $', () => {
    const at = { turn: 1, step: 1, attempt: 1 }
    const copy = { ...recorded(at) }
    log.marks.mark(copy)
    expectError(
      thrown(() => verifyReconstruction(copy, log.session, at, log.marks)),
      ReconstructionError,
      'RECONSTRUCTION_MISMATCH',
      { path: '$' },
    )
  })

  test('a frozen, marked request with a mutable part fails at $ and names the part', () => {
    const at = { turn: 1, step: 1, attempt: 1 }
    const copy = Object.freeze({ ...recorded(at), messages: [...recorded(at).messages] })
    log.marks.mark(copy)
    const error = expectError(
      thrown(() => verifyReconstruction(copy, log.session, at, log.marks)),
      ReconstructionError,
      'RECONSTRUCTION_MISMATCH',
      { path: '$' },
    )
    expect(error.message).toContain('$.messages is mutable')
  })

  test('a changed message text fails at its path with both values', () => {
    const at = { turn: 1, step: 1, attempt: 1 }
    const original = recorded(at)
    const [first] = original.messages
    const changed = { ...first, content: [{ type: 'text', text: 'HI' }] } as typeof first & object
    const request = buildLoopRequest({
      header: helpful,
      messages: [changed],
      sessionId: log.session.id,
      signal: new AbortController().signal,
      marks: log.marks,
    })
    expectError(
      thrown(() => verifyReconstruction(request, log.session, at, log.marks)),
      ReconstructionError,
      'RECONSTRUCTION_MISMATCH',
      {
        path: '$.messages[0].content[0].text',
        expected: 'hi',
        actual: 'HI',
      },
    )
  })

  test('a changed system fails at $.system', () => {
    const at = { turn: 2, step: 1, attempt: 1 }
    const request = buildLoopRequest({
      header: helpful,
      messages: recorded(at).messages,
      sessionId: log.session.id,
      signal: new AbortController().signal,
      marks: log.marks,
    })
    const error = expectError(
      thrown(() => verifyReconstruction(request, log.session, at, log.marks)),
      ReconstructionError,
      'RECONSTRUCTION_MISMATCH',
      {
        path: '$.system',
        expected: 'You are terse.',
        actual: 'You are helpful.',
      },
    )
    expect(error.message).toContain('$.system')
  })

  test('an extra config field, a missing message and a wrong session id fail at their paths', () => {
    const at = { turn: 1, step: 2, attempt: 2 }
    const { messages } = recorded(at)
    const build = (header: RequestHeader, list: ModelRequest['messages'], sessionId = log.session.id): ModelRequest =>
      buildLoopRequest({ header, messages: list, sessionId, signal: new AbortController().signal, marks: log.marks })
    const cases: [ModelRequest, string, unknown, unknown][] = [
      [build({ ...helpful, config: { ...helpful.config, temperature: 1 } }, messages), '$.temperature', undefined, 1],
      [build(helpful, messages.slice(0, 2)), '$.messages', messages, messages.slice(0, 2)],
      [build(helpful, messages, 'other'), '$.metadata.sessionId', log.session.id, 'other'],
    ]
    for (const [request, path, expected, actual] of cases) {
      expectError(
        thrown(() => verifyReconstruction(request, log.session, at, log.marks)),
        ReconstructionError,
        'RECONSTRUCTION_MISMATCH',
        { path, expected, actual },
      )
    }
  })

  test('a non-JSON value fails at its path', () => {
    const at = { turn: 1, step: 1, attempt: 1 }
    const request = Object.freeze({
      ...recorded(at),
      metadata: Object.freeze({ sessionId: log.session.id, purpose: 'conversation', extra: Number.NaN }),
    })
    log.marks.mark(request)
    expectError(
      thrown(() => verifyReconstruction(request, log.session, at, log.marks)),
      ReconstructionError,
      'RECONSTRUCTION_MISMATCH',
      {
        path: '$.metadata.extra',
        expected: undefined,
      },
    )
  })

  test('key order does not matter and the signal is excluded', () => {
    const at = { turn: 1, step: 1, attempt: 1 }
    const { signal: _signal, ...body } = recorded(at)
    const reordered = Object.freeze({
      signal: new AbortController().signal,
      ...Object.fromEntries(Object.entries(body).reverse()),
    })
    log.marks.mark(reordered)
    expect(() => verifyReconstruction(reordered, log.session, at, log.marks)).not.toThrow()
  })

  test('an attempt that is neither logged nor pending throws RequestNotFoundError', () => {
    const at = { turn: 1, step: 1, attempt: 3 }
    expectError(
      thrown(() => verifyReconstruction(recorded({ turn: 1, step: 1, attempt: 1 }), log.session, at, log.marks)),
      RequestNotFoundError,
      'REQUEST_NOT_FOUND',
      at,
    )
  })
})
