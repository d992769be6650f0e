/**
 * The durable retry events: the payload schemas and the step enclosure the
 * `retry` entry registers, exercised through `session.append` (typed errors, nothing committed).
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, type JsonObject, SessionEventError, StructureError } from 'yoke'
import { retryEventDataSchema, retryStartedEventDataSchema } from '../../../src/model/index.js'
import { fakeIds } from 'yoke/testing'
import { SE, SS, TS } from '../../session/builders.js'
import { appendAll, expectRejects } from '../../session/session-helpers.js'

const failure = { code: 'RATE_LIMIT', message: 'slow', retryable: true, phase: 'response' }
const retry: JsonObject = { retryId: 'r1', turn: 1, step: 1, attempt: 1, maxRetries: 5, delayMs: 500, failure }
const started: JsonObject = { retryId: 'r1', turn: 1, step: 1, attempt: 1 }

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
})

async function openStep() {
  const harness = await createHarness({ ids: fakeIds() })
  harnesses.push(harness)
  return appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
}

function without(data: JsonObject, key: string): JsonObject {
  const copy = { ...data }
  delete copy[key]
  return copy
}

describe('llm/retry payload', () => {
  test('a valid payload commits verbatim', async () => {
    const session = await openStep()
    expect(session.append('llm/retry', retry).data).toEqual(retry)
    expect(session.append('llm/retry-started', started).data).toEqual(started)
  })

  test.each([
    ['a missing failure', without(retry, 'failure'), 'data.failure'],
    ['an empty retryId', { ...retry, retryId: '' }, 'data.retryId'],
    ['turn 0', { ...retry, turn: 0 }, 'data.turn'],
    ['a fractional step', { ...retry, step: 1.5 }, 'data.step'],
    ['attempt 0', { ...retry, attempt: 0 }, 'data.attempt'],
    ['a negative maxRetries', { ...retry, maxRetries: -1 }, 'data.maxRetries'],
    ['a negative delayMs', { ...retry, delayMs: -1 }, 'data.delayMs'],
    ['a string delayMs', { ...retry, delayMs: '500' }, 'data.delayMs'],
    ['a failure without a message', { ...retry, failure: { code: 'SERVER' } }, 'data.failure.message'],
    ['a failure with an empty code', { ...retry, failure: { ...failure, code: '' } }, 'data.failure.code'],
    [
      'a failure with an HTTP status out of range',
      { ...retry, failure: { ...failure, status: 700 } },
      'data.failure.status',
    ],
    ['an unknown key', { ...retry, extra: true }, 'data.extra'],
  ])('%s is refused with SessionEventError INVALID_PAYLOAD at %s', async (_name, data, path) => {
    const session = await openStep()
    expectRejects(session, () => session.append('llm/retry', data), SessionEventError, 'INVALID_PAYLOAD', {
      path,
      type: 'llm/retry',
    })
  })

  test('the schema is exported and strict', () => {
    expect(retryEventDataSchema.safeParse(retry).success).toBe(true)
    expect(retryEventDataSchema.safeParse({ ...retry, delayMs: 0 }).success).toBe(true)
    expect(retryEventDataSchema.safeParse({ ...retry, note: 'x' }).success).toBe(false)
  })
})

describe('llm/retry-started payload', () => {
  test.each([
    ['a missing retryId', without(started, 'retryId'), 'data.retryId'],
    ['step 0', { ...started, step: 0 }, 'data.step'],
    ['a fractional attempt', { ...started, attempt: 2.5 }, 'data.attempt'],
    ['a delayMs (not part of it)', { ...started, delayMs: 500 }, 'data.delayMs'],
  ])('%s is refused with SessionEventError INVALID_PAYLOAD at %s', async (_name, data, path) => {
    const session = await openStep()
    expectRejects(session, () => session.append('llm/retry-started', data), SessionEventError, 'INVALID_PAYLOAD', {
      path,
      type: 'llm/retry-started',
    })
  })

  test('the schema is exported and strict', () => {
    expect(retryStartedEventDataSchema.safeParse(started).success).toBe(true)
    expect(retryStartedEventDataSchema.safeParse({ ...started, failure }).success).toBe(false)
  })
})

describe('enclosure step', () => {
  test.each(['llm/retry', 'llm/retry-started'])(
    '%s outside an open step is refused with StructureError NO_OPEN_STEP',
    async (type) => {
      const session = await openStep()
      appendAll(session, [SE(1, 1)])
      const data = type === 'llm/retry' ? retry : started
      expectRejects(session, () => session.append(type, data), StructureError, 'NO_OPEN_STEP')
    },
  )
})
