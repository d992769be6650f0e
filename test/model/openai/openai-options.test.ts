import { afterEach, describe, expect, test } from 'vitest'
import { deepseek, InvalidOptionsError, type OpenAICompatibleOptions, openaiCompatible } from 'yoke'
import { DEEPSEEK_MODELS } from '../../../src/model/index.js'
import { fakeClock } from 'yoke/testing'
import { startIdleWatchdog } from '../../../src/model/openai/idle-watchdog.js'
import { redactText, resolveCredential } from '../../../src/model/openai/resolve-credential.js'
import { thrownBy } from '../../helpers/outcomes.js'

const base: OpenAICompatibleOptions = { baseURL: 'http://127.0.0.1:1/v1', apiKey: 'k' }

function optionsError(options: unknown): InvalidOptionsError {
  const error = thrownBy(() => openaiCompatible(options as OpenAICompatibleOptions))
  if (!InvalidOptionsError.is(error)) throw new Error(`expected InvalidOptionsError, got ${String(error)}`)
  return error
}

describe('options', () => {
  test.each([
    [{ baseURL: 'ftp://x' }, 'baseURL'],
    [{ baseURL: 'not a url' }, 'baseURL'],
    [{ baseURL: 'https://user:pass@x/v1' }, 'baseURL'],
    [{ apiKey: 'x', apiKeyEnv: 'Y' }, 'apiKey'],
    [{ apiKey: 42 }, 'apiKey'],
    [{ apiKey: undefined, apiKeyEnv: '' }, 'apiKeyEnv'],
    [{ model: '' }, 'model'],
    [{ provider: 'Has Spaces' }, 'provider'],
    [{ headers: { authorization: 'Bearer x' } }, 'headers.authorization'],
    [{ headers: { Authorization: 'Bearer x' } }, 'headers.Authorization'],
    [{ headers: { 'x-ok': 1 } }, 'headers["x-ok"]'],
    [{ headers: { 'x-bad': 'line\nbreak' } }, 'headers["x-bad"]'],
    [{ headers: { 'bad name': 'v' } }, 'headers["bad name"]'],
    [{ idleTimeoutMs: 0 }, 'idleTimeoutMs'],
    [{ idleTimeoutMs: 1.5 }, 'idleTimeoutMs'],
    [{ fetch: 'fetch' }, 'fetch'],
    [{ models: { m: { contextWindow: -1 } } }, 'models.m.contextWindow'],
    [{ models: { m: { inputModalities: ['audio'] } } }, 'models.m.inputModalities[0]'],
    [{ models: { m: { extra: true } } }, 'models.m.extra'],
    [{ reasoningStyle: 'anthropic' }, 'reasoningStyle'],
    [{ sendReasoning: 'yes' }, 'sendReasoning'],
    [{ maxTokensField: 'max_output_tokens' }, 'maxTokensField'],
    [{ sessionIdHeader: true }, 'sessionIdHeader'],
    [{ sessionIdHeader: 'x session' }, 'sessionIdHeader'],
    [{ clock: {} }, 'clock'],
    [{ unknownOption: 1 }, 'unknownOption'],
  ])('%j → InvalidOptionsError at %s', (overlay, field) => {
    const error = optionsError({ ...base, ...overlay })
    expect(error.code).toBe('INVALID_OPTIONS')
    expect(error.field).toBe(field)
  })

  test('apiKey with apiKeyEnv names apiKey and says why', () => {
    const error = optionsError({ baseURL: 'http://x', apiKey: 'x', apiKeyEnv: 'Y' })
    expect(error.message).toBe('options.apiKey: apiKey and apiKeyEnv are mutually exclusive; give one')
  })

  test('a missing or non-object options value is refused', () => {
    expect(optionsError(undefined).code).toBe('INVALID_OPTIONS')
    expect(optionsError({}).field).toBe('baseURL')
  })

  test('toJSON shows provider, baseURL (one trailing / trimmed), model and the key only as [redacted]', () => {
    const withKey = openaiCompatible({ baseURL: 'http://h/v1/', apiKey: 'secret-key', model: 'm' })
    expect(JSON.parse(JSON.stringify(withKey))).toEqual({
      provider: 'openai-compatible',
      baseURL: 'http://h/v1',
      model: 'm',
      apiKey: '[redacted]',
    })
    const withFunction = openaiCompatible({ baseURL: 'http://h', apiKey: () => 'secret-key', provider: 'p' })
    expect(withFunction.toJSON()).toEqual({ provider: 'p', baseURL: 'http://h', apiKey: '[redacted]' })
    expect(openaiCompatible({ baseURL: 'http://h', apiKeyEnv: 'MY_KEY' }).toJSON()).toEqual({
      provider: 'openai-compatible',
      baseURL: 'http://h',
      apiKeyEnv: 'MY_KEY',
    })
    expect(openaiCompatible({ baseURL: 'http://h' }).toJSON()).toEqual({
      provider: 'openai-compatible',
      baseURL: 'http://h',
    })
  })

  test('provider, defaultModel and describeModel come from the options', () => {
    const adapter = openaiCompatible({
      baseURL: 'http://h',
      provider: 'local',
      model: 'm1',
      models: { m1: { contextWindow: 8192, inputModalities: ['text'] } },
    })
    expect(adapter.provider).toBe('local')
    expect(adapter.defaultModel).toBe('m1')
    expect(adapter.describeModel('m1')).toEqual({ contextWindow: 8192, inputModalities: ['text'] })
    expect(adapter.describeModel('other')).toBeUndefined()
    expect(adapter.describeModel('toString')).toBeUndefined()
    expect('defaultModel' in openaiCompatible({ baseURL: 'http://h' })).toBe(false)
  })
})

describe('deepseek defaults', () => {
  test('provider, baseURL, key variable and catalog', () => {
    const adapter = deepseek()
    expect(adapter.toJSON()).toEqual({
      provider: 'deepseek',
      baseURL: 'https://api.deepseek.com',
      apiKeyEnv: 'DEEPSEEK_API_KEY',
    })
    expect(adapter.describeModel('deepseek-v4-flash')).toEqual({
      contextWindow: 1_000_000,
      reasoningEfforts: ['off', 'low', 'high', 'max'],
      defaultReasoningEffort: 'high',
    })
    expect(adapter.describeModel('deepseek-v4-pro')).toEqual(DEEPSEEK_MODELS['deepseek-v4-pro'])
    expect(adapter.describeModel('deepseek-v9')).toEqual({
      reasoningEfforts: ['off', 'low', 'high', 'max'],
      defaultReasoningEffort: 'high',
    })
  })

  test('an apiKey replaces the default key variable; both given is refused', () => {
    expect(deepseek({ apiKey: 'k' }).toJSON()).toEqual({
      provider: 'deepseek',
      baseURL: 'https://api.deepseek.com',
      apiKey: '[redacted]',
    })
    expect(deepseek({ apiKeyEnv: 'OTHER' }).toJSON()).toMatchObject({ apiKeyEnv: 'OTHER' })
    const error = thrownBy(() => deepseek({ apiKey: 'k', apiKeyEnv: 'OTHER' }))
    expect(InvalidOptionsError.is(error) && error.field).toBe('apiKey')
  })

  test('a models option is merged over the catalog and validated', () => {
    const adapter = deepseek({ models: { custom: { contextWindow: 64 } } })
    expect(adapter.describeModel('custom')).toEqual({ contextWindow: 64 })
    expect(adapter.describeModel('deepseek-v4-flash')?.contextWindow).toBe(1_000_000)
    const error = thrownBy(() => deepseek({ models: 'nope' as never }))
    expect(InvalidOptionsError.is(error) && error.field).toBe('models')
    const bad = thrownBy(() => deepseek({ models: { custom: { contextWindow: 0 } } }))
    expect(InvalidOptionsError.is(bad) && bad.field).toBe('models.custom.contextWindow')
  })
})

describe('resolveCredential', () => {
  const variable = 'YOKE_OPENAI_OPTIONS_TEST_KEY'
  afterEach(() => {
    delete process.env[variable]
  })

  test('a string key is trimmed; no source means no key', async () => {
    expect(await resolveCredential({ kind: 'value', apiKey: '  sk-1\n' })).toEqual({ ok: true, key: 'sk-1' })
    expect(await resolveCredential({ kind: 'none' })).toEqual({ ok: true, key: undefined })
  })

  test('the environment is read at every call, never cached', async () => {
    process.env[variable] = 'one'
    expect(await resolveCredential({ kind: 'env', name: variable })).toEqual({ ok: true, key: 'one' })
    process.env[variable] = 'two'
    expect(await resolveCredential({ kind: 'env', name: variable })).toEqual({ ok: true, key: 'two' })
  })

  test('missing or empty keys are MISSING_CREDENTIAL naming the reference', async () => {
    expect(await resolveCredential({ kind: 'env', name: variable })).toEqual({
      ok: false,
      failure: {
        code: 'MISSING_CREDENTIAL',
        message: `no API key: environment variable ${variable} is not set`,
        retryable: false,
        phase: 'pre-request',
        detail: { reference: `environment variable ${variable}` },
      },
    })
    process.env[variable] = '   '
    const empty = await resolveCredential({ kind: 'env', name: variable })
    expect(!empty.ok && empty.failure.message).toBe(`no API key: environment variable ${variable} is empty`)
    const emptyString = await resolveCredential({ kind: 'value', apiKey: '' })
    expect(!emptyString.ok && emptyString.failure.message).toBe('no API key: the apiKey option is empty')
  })

  test('a key function is awaited per call; its rejection is MISSING_CREDENTIAL without the cause text', async () => {
    let calls = 0
    const source = { kind: 'value' as const, apiKey: async () => `key-${++calls}` }
    expect(await resolveCredential(source)).toEqual({ ok: true, key: 'key-1' })
    expect(await resolveCredential(source)).toEqual({ ok: true, key: 'key-2' })
    const rejected = await resolveCredential({
      kind: 'value',
      apiKey: () => Promise.reject(new Error('vault says sk-leaked')),
    })
    expect(rejected.ok).toBe(false)
    expect(JSON.stringify(rejected)).not.toContain('sk-leaked')
    expect(!rejected.ok && rejected.failure).toMatchObject({
      code: 'MISSING_CREDENTIAL',
      message: 'no API key: the apiKey function failed',
    })
    const thrown = await resolveCredential({
      kind: 'value',
      apiKey: () => {
        throw new Error('sync sk-leaked')
      },
    })
    expect(!thrown.ok && thrown.failure.code).toBe('MISSING_CREDENTIAL')
    const notString = await resolveCredential({ kind: 'value', apiKey: () => 42 as unknown as string })
    expect(!notString.ok && notString.failure.code).toBe('MISSING_CREDENTIAL')
  })

  test.each([' k 3', 'k\u00e9y', 'a\tb', 'k\u0000'])(
    '%j is INVALID_CREDENTIAL (the key is not in the failure)',
    async (key) => {
      const result = await resolveCredential({ kind: 'value', apiKey: key })
      expect(!result.ok && result.failure).toEqual({
        code: 'INVALID_CREDENTIAL',
        message: 'the API key from the apiKey option is not header-safe (printable ASCII without spaces)',
        retryable: false,
        phase: 'pre-request',
        detail: { reference: 'the apiKey option' },
      })
    },
  )

  test('redactText replaces plain and JSON-escaped occurrences', () => {
    expect(redactText('a k2 b k2', 'k2')).toBe('a [redacted] b [redacted]')
    expect(redactText('quoted: "x\\"y"', 'x"y')).toBe('quoted: "[redacted]"')
    expect(redactText('nothing', undefined)).toBe('nothing')
  })
})

describe('idle watchdog', () => {
  test('fires once after timeoutMs of silence; every kick restarts the window', async () => {
    const clock = fakeClock()
    let fired = 0
    const watchdog = startIdleWatchdog({ timeoutMs: 100, clock, onExpire: () => fired++ })
    await clock.advance(60)
    watchdog.kick()
    await clock.advance(60)
    expect(fired).toBe(0)
    watchdog.kick()
    await clock.advance(99)
    expect(fired).toBe(0)
    await clock.advance(1)
    expect(fired).toBe(1)
    expect(watchdog.expired).toBe(true)
    await clock.advance(1000)
    expect(fired).toBe(1)
    expect(clock.pending()).toEqual([])
  })

  test('a pause stops counting until resume; stop cancels the timer', async () => {
    const clock = fakeClock()
    let fired = 0
    const watchdog = startIdleWatchdog({ timeoutMs: 100, clock, onExpire: () => fired++ })
    watchdog.pause()
    await clock.advance(500)
    expect(fired).toBe(0)
    watchdog.resume()
    await clock.advance(99)
    expect(fired).toBe(0)
    watchdog.stop()
    expect(clock.pending()).toEqual([])
    await clock.advance(1000)
    expect(fired).toBe(0)
    expect(watchdog.expired).toBe(false)
  })
})
