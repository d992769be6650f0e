/**
 * RetryPolicy: defaults, each validation rule with the field it names (through
 * `withRetry` and through the `retry` entry's config), and `isRetryable`.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import {
  createHarness,
  InvalidOptionsError,
  type LlmFailure,
  PluginConfigError,
  PluginStartError,
  withRetry,
} from 'yoke'
import { fieldPath } from '../../../src/errors/issue.js'
import { defaultRetryPolicy, isRetryable, type RetryPolicy, retryPolicySchema } from '../../../src/model/index.js'
import { rejectionOf, thrownBy } from '../../helpers/outcomes.js'
import { expectError } from '../../session/session-helpers.js'
import { inlineRegistry } from './inline-registry.js'

const failure = (code: string, retryable?: boolean): LlmFailure => ({
  code,
  message: code,
  ...(retryable === undefined ? {} : { retryable }),
})

describe('defaults', () => {
  test('the default policy is { maxRetries: 5, initialDelayMs: 500, maxDelayMs: 10000, jitter: 0.1, honorRetryAfter: true }, frozen', () => {
    expect(defaultRetryPolicy).toEqual({
      maxRetries: 5,
      initialDelayMs: 500,
      maxDelayMs: 10000,
      jitter: 0.1,
      honorRetryAfter: true,
    })
    expect(Object.isFrozen(defaultRetryPolicy)).toBe(true)
    expect(retryPolicySchema.parse({})).toEqual(defaultRetryPolicy)
  })

  test('given fields override the defaults and keep the rest', () => {
    expect(retryPolicySchema.parse({ maxRetries: 0, retryableCodes: ['AUTH'], jitter: 1 })).toEqual({
      maxRetries: 0,
      retryableCodes: ['AUTH'],
      initialDelayMs: 500,
      maxDelayMs: 10000,
      jitter: 1,
      honorRetryAfter: true,
    })
  })
})

const invalid: readonly [string, Readonly<Record<string, unknown>>, string, unknown][] = [
  ['maxRetries below 0', { maxRetries: -1 }, 'maxRetries', -1],
  ['a fractional maxRetries', { maxRetries: 1.5 }, 'maxRetries', 1.5],
  ['a string maxRetries', { maxRetries: '3' }, 'maxRetries', '3'],
  ['initialDelayMs 0', { initialDelayMs: 0 }, 'initialDelayMs', 0],
  ['a fractional initialDelayMs', { initialDelayMs: 2.5 }, 'initialDelayMs', 2.5],
  ['maxDelayMs 0', { maxDelayMs: 0 }, 'maxDelayMs', 0],
  ['an infinite maxDelayMs', { maxDelayMs: Number.POSITIVE_INFINITY }, 'maxDelayMs', Number.POSITIVE_INFINITY],
  ['maxDelayMs below initialDelayMs', { initialDelayMs: 1000, maxDelayMs: 999 }, 'maxDelayMs', 999],
  ['initialDelayMs above the default maxDelayMs', { initialDelayMs: 20000 }, 'maxDelayMs', undefined],
  ['jitter below 0', { jitter: -0.1 }, 'jitter', -0.1],
  ['jitter above 1', { jitter: 1.01 }, 'jitter', 1.01],
  ['a NaN jitter', { jitter: Number.NaN }, 'jitter', Number.NaN],
  ['a non-boolean honorRetryAfter', { honorRetryAfter: 'yes' }, 'honorRetryAfter', 'yes'],
  ['retryableCodes not an array', { retryableCodes: 'RATE_LIMIT' }, 'retryableCodes', 'RATE_LIMIT'],
  ['an empty retryable code', { retryableCodes: ['SERVER', ''] }, 'retryableCodes[1]', ''],
  ['an unknown key', { retries: 3 }, 'retries', 3],
]

describe('validation through withRetry: InvalidOptionsError naming the field', () => {
  test.each(invalid)('%s → field %j', (_name, policy, field, value) => {
    const error = expectError(
      thrownBy(() => withRetry(inlineRegistry([]), policy as Partial<RetryPolicy>)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field,
      },
    )
    expect(error.message.startsWith(`policy.${field}: `)).toBe(true)
    expect(Object.is((error as unknown as { value: unknown }).value, value)).toBe(true)
  })

  test.each([
    ['maxRetries 0', { maxRetries: 0 }],
    ['jitter 0', { jitter: 0 }],
    ['jitter 1', { jitter: 1 }],
    ['maxDelayMs equal to initialDelayMs', { initialDelayMs: 700, maxDelayMs: 700 }],
    ['an empty retryableCodes', { retryableCodes: [] }],
  ])('%s is accepted', (_name, policy) => {
    expect(() => withRetry(inlineRegistry([]), policy)).not.toThrow()
  })

  test('a policy that is not an object is refused at the root', () => {
    const error = expectError(
      thrownBy(() => withRetry(inlineRegistry([]), 5 as unknown as Partial<RetryPolicy>)),
      InvalidOptionsError,
      'INVALID_OPTIONS',
      {
        field: '',
      },
    )
    expect(error.message).toBe('policy: must be a retry policy object')
  })
})

describe('validation through the retry entry: PluginConfigError at the field path', () => {
  test.each(invalid.filter(([name]) => name !== 'an unknown key'))('%s → path %j', async (_name, config, field) => {
    const error = expectError(
      await rejectionOf(createHarness({ patches: [{ id: 'retry', config }] })),
      PluginStartError,
      'PLUGIN_START_FAILED',
      {
        plugin: 'retry',
      },
    )
    const cause = expectError(error.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID', { plugin: 'retry' })
    expect(fieldPath(cause.issues[0]?.path ?? [])).toBe(field)
  })

  test('a merge patch is validated with the defaults filled in', async () => {
    const error = expectError(
      await rejectionOf(createHarness({ patches: [{ id: 'retry', merge: { initialDelayMs: 12000 } }] })),
      PluginStartError,
      'PLUGIN_START_FAILED',
    )
    expect(expectError(error.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID').issues[0]).toEqual({
      path: ['maxDelayMs'],
      message: 'must be ≥ initialDelayMs',
    })
  })
})

describe('isRetryable', () => {
  test('without retryableCodes, failure.retryable === true decides (absent ≡ false)', () => {
    expect(isRetryable(defaultRetryPolicy, failure('RATE_LIMIT', true))).toBe(true)
    expect(isRetryable(defaultRetryPolicy, failure('RATE_LIMIT', false))).toBe(false)
    expect(isRetryable(defaultRetryPolicy, failure('RATE_LIMIT'))).toBe(false)
    expect(isRetryable(defaultRetryPolicy, failure('AUTH', true))).toBe(true)
  })

  test('retryableCodes, when given, alone decides', () => {
    const policy = { retryableCodes: ['AUTH', 'HTTP_404'] }
    expect(isRetryable(policy, failure('AUTH', false))).toBe(true)
    expect(isRetryable(policy, failure('HTTP_404'))).toBe(true)
    expect(isRetryable(policy, failure('RATE_LIMIT', true))).toBe(false)
    expect(isRetryable({ retryableCodes: [] }, failure('SERVER', true))).toBe(false)
  })
})
