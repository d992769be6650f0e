import { describe, expect, test } from 'vitest'
import { classifyErrorBody, requestIdOf, retryAfterMsOf } from '../../../src/model/openai/classify-http-error.js'

const classify = (status: number, body: unknown, key?: string) =>
  classifyErrorBody({
    status,
    bodyText: typeof body === 'string' ? body : JSON.stringify(body),
    key,
    phase: 'response',
  })

describe('classifyErrorBody', () => {
  test.each([
    // step 1: a structured provider code wins over the status
    [400, { error: { message: 'm', code: 'context_length_exceeded' } }, 'CONTEXT_WINDOW_EXCEEDED'],
    [429, { error: { message: 'm', code: 'insufficient_quota' } }, 'QUOTA'],
    [400, { error: { message: 'm', type: 'insufficient_balance' } }, 'QUOTA'],
    [403, { error: { message: 'm', code: 'billing_hard_limit_reached' } }, 'QUOTA'],
    [400, { error: { message: 'm', code: 'invalid_api_key' } }, 'AUTH'],
    [400, { error: { message: 'm', code: 'rate_limit_exceeded' } }, 'RATE_LIMIT'],
    // step 2: the status
    [401, {}, 'AUTH'],
    [403, {}, 'AUTH'],
    [402, {}, 'QUOTA'],
    [408, {}, 'TIMEOUT'],
    [429, {}, 'RATE_LIMIT'],
    [400, {}, 'INVALID_REQUEST'],
    [413, {}, 'INVALID_REQUEST'],
    [422, {}, 'INVALID_REQUEST'],
    [500, {}, 'SERVER'],
    [503, {}, 'SERVER'],
    [418, {}, 'HTTP_418'],
    [404, 'not found', 'HTTP_404'],
    // step 3: wording, only for 400/413/422 (overflow) and 429 (quota)
    [400, { error: { message: 'Please reduce the length of the messages.' } }, 'CONTEXT_WINDOW_EXCEEDED'],
    [413, { error: { message: 'Prompt is too long' } }, 'CONTEXT_WINDOW_EXCEEDED'],
    [422, { error: { message: 'exceeds the context window' } }, 'CONTEXT_WINDOW_EXCEEDED'],
    [400, { error: { message: 'Too many tokens in request' } }, 'CONTEXT_WINDOW_EXCEEDED'],
    [400, { error: { message: "This model's maximum context length is 8192" } }, 'CONTEXT_WINDOW_EXCEEDED'],
    [400, { error: { message: 'bad value', code: 'invalid_value' } }, 'INVALID_REQUEST'],
    [429, { error: { message: 'Insufficient Balance' } }, 'QUOTA'],
    [429, { error: { message: 'You exceeded your current quota' } }, 'QUOTA'],
    [429, { error: { message: 'out of credit' } }, 'QUOTA'],
    [500, { error: { message: 'context length exceeded' } }, 'SERVER'],
    [401, { error: { message: 'check your billing' } }, 'AUTH'],
  ])('HTTP %i %j → %s', (status, body, code) => {
    expect(classify(status, body).code).toBe(code)
  })

  test('the exact failure: message format, table retryable, detail with providerCode and the parsed body', () => {
    expect(
      classifyErrorBody({
        status: 429,
        bodyText: JSON.stringify({
          error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' },
        }),
        requestId: 'req_1',
        retryAfterMs: 2000,
        key: undefined,
        phase: 'response',
      }),
    ).toEqual({
      code: 'RATE_LIMIT',
      message: 'model request failed with HTTP 429 (RATE_LIMIT): Rate limit reached',
      retryable: true,
      status: 429,
      retryAfterMs: 2000,
      requestId: 'req_1',
      phase: 'response',
      detail: {
        providerCode: 'rate_limit_exceeded',
        body: { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } },
      },
    })
  })

  test('error = body.error ?? body; providerCode = code ?? type', () => {
    expect(classify(400, { message: 'top level', type: 'invalid_request_error' })).toMatchObject({
      message: 'model request failed with HTTP 400 (INVALID_REQUEST): top level',
      detail: { providerCode: 'invalid_request_error' },
    })
    expect(classify(500, { error: 'plain string error' }).message).toBe(
      'model request failed with HTTP 500 (SERVER): plain string error',
    )
  })

  test('an unstructured body is quoted (first 500 characters) and kept out of detail', () => {
    const failure = classify(502, `<html>${'x'.repeat(600)}</html>`)
    expect(failure.message).toBe(`model request failed with HTTP 502 (SERVER): <html>${'x'.repeat(494)}`)
    expect(failure.detail).toBeUndefined()
    expect(classify(404, '').message).toBe('model request failed with HTTP 404 (HTTP_404): (empty body)')
  })

  test('a JSON body over 4 KiB is not kept in detail', () => {
    const failure = classify(400, { error: { message: 'big', code: 'x', padding: 'p'.repeat(5000) } })
    expect(failure.detail).toEqual({ providerCode: 'x' })
  })

  test('the key is redacted from the message and from detail.body', () => {
    const failure = classify(
      401,
      { error: { message: 'Incorrect API key provided: sk-live-42.', code: 'invalid_api_key' } },
      'sk-live-42',
    )
    expect(failure.message).toBe('model request failed with HTTP 401 (AUTH): Incorrect API key provided: [redacted].')
    expect(JSON.stringify(failure)).not.toContain('sk-live-42')
    expect(failure.detail).toEqual({
      providerCode: 'invalid_api_key',
      body: { error: { message: 'Incorrect API key provided: [redacted].', code: 'invalid_api_key' } },
    })
  })

  test('without a status (an in-stream error) the default is SERVER and the message has no HTTP part', () => {
    expect(classifyErrorBody({ bodyText: '{"error":{"message":"boom"}}', key: undefined, phase: 'streaming' })).toEqual(
      {
        code: 'SERVER',
        message: 'model request failed (SERVER): boom',
        retryable: true,
        phase: 'streaming',
        detail: { body: { error: { message: 'boom' } } },
      },
    )
  })
})

describe('retryAfterMsOf', () => {
  const now = Date.parse('2030-01-01T00:00:00Z')
  test.each([
    [{ 'retry-after-ms': '1500' }, 1500],
    [{ 'retry-after-ms': '12.2' }, 13],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'retry-after-ms': 'soon', 'retry-after': '2' }, 2000],
    [{ 'retry-after': '2' }, 2000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after': 'Tue, 01 Jan 2030 00:00:30 GMT' }, 30_000],
    [{ 'retry-after': 'Mon, 31 Dec 2029 23:59:00 GMT' }, undefined],
    [{ 'retry-after': '0' }, undefined],
    [{ 'retry-after': '-3' }, undefined],
    [{ 'retry-after': 'later' }, undefined],
    [{}, undefined],
  ])('%j → %s', (headers, expected) => {
    expect(retryAfterMsOf(new Headers(headers), now)).toBe(expected)
  })
})

test('requestIdOf reads x-request-id, else request-id', () => {
  expect(requestIdOf(new Headers({ 'x-request-id': 'a', 'request-id': 'b' }))).toBe('a')
  expect(requestIdOf(new Headers({ 'request-id': 'b' }))).toBe('b')
  expect(requestIdOf(new Headers())).toBeUndefined()
})
