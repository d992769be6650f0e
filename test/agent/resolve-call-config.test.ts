/**
 * The seed call config of a request: the last header minus its adapter
 * defaults, the options overlay on a driver's first request, the dropped reasoning effort on a
 * switch, the frozen clone, and the missing-model check.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { MissingModelError, type RequestHeader } from 'yoke'
import {
  type CallConfigOptions,
  checkCallConfig,
  frozenCallConfig,
  resolveCallConfig,
} from '../../src/agent/resolve-call-config.js'
import { expectError } from '../session/session-helpers.js'

const logged: RequestHeader = {
  config: { provider: 'mock', model: 'm1', reasoningEffort: 'high', temperature: 0.5, maxTokens: 4096, stop: ['END'] },
}

const withDefaults: RequestHeader = {
  config: { provider: 'mock', model: 'm1', reasoningEffort: 'medium', temperature: 0.5, maxTokens: 8192 },
  adapterDefaults: { reasoningEffort: true, maxTokens: true },
}

function expectThrowsMissing(action: () => unknown, missing: readonly string[]): MissingModelError {
  let thrown: unknown
  try {
    action()
  } catch (error) {
    thrown = error
  }
  return expectError(thrown, MissingModelError, 'MISSING_MODEL', { missing })
}

describe('first request of a driver', () => {
  test('without a logged header the seed is exactly the options call fields, in CallConfig order', () => {
    const options: CallConfigOptions = {
      stop: ['x'],
      maxTokens: 100,
      temperature: 1,
      reasoningEffort: 'low',
      model: 'm',
      provider: 'p',
    }
    const seed = resolveCallConfig({ lastHeader: undefined, options, firstRequestOfDriver: true })
    expect(seed).toEqual({
      provider: 'p',
      model: 'm',
      reasoningEffort: 'low',
      temperature: 1,
      maxTokens: 100,
      stop: ['x'],
    })
    expect(Object.keys(seed)).toEqual(['provider', 'model', 'reasoningEffort', 'temperature', 'maxTokens', 'stop'])
  })

  test('options without call fields and no header give an empty seed', () => {
    const options = { provider: undefined, model: undefined } as const
    expect(resolveCallConfig({ lastHeader: undefined, options, firstRequestOfDriver: true })).toEqual({})
  })

  test('the logged config is kept when the options set nothing', () => {
    expect(resolveCallConfig({ lastHeader: logged, options: {}, firstRequestOfDriver: true })).toEqual(logged.config)
  })

  test('adapter-default fields of the logged header are dropped', () => {
    expect(resolveCallConfig({ lastHeader: withDefaults, options: {}, firstRequestOfDriver: true })).toEqual({
      provider: 'mock',
      model: 'm1',
      temperature: 0.5,
    })
  })

  test('only the marked field is dropped', () => {
    const header: RequestHeader = {
      config: { provider: 'mock', model: 'm1', reasoningEffort: 'high', maxTokens: 8192 },
      adapterDefaults: { maxTokens: true },
    }
    expect(resolveCallConfig({ lastHeader: header, options: {}, firstRequestOfDriver: true })).toEqual({
      provider: 'mock',
      model: 'm1',
      reasoningEffort: 'high',
    })
  })

  test('every field set in the options overlays the logged config; unset ones keep the log', () => {
    const seed = resolveCallConfig({
      lastHeader: logged,
      options: { temperature: 0, stop: [], maxTokens: undefined },
      firstRequestOfDriver: true,
    })
    expect(seed).toEqual({
      provider: 'mock',
      model: 'm1',
      reasoningEffort: 'high',
      temperature: 0,
      maxTokens: 4096,
      stop: [],
    })
  })

  test.each([
    ['a provider switch', { provider: 'other' }, { provider: 'other', model: 'm1' }],
    ['a model switch', { model: 'm2' }, { provider: 'mock', model: 'm2' }],
    ['a switch of both', { provider: 'other', model: 'm2' }, { provider: 'other', model: 'm2' }],
  ])('%s drops the logged reasoningEffort', (_name, options, route) => {
    expect(resolveCallConfig({ lastHeader: logged, options, firstRequestOfDriver: true })).toEqual({
      ...route,
      temperature: 0.5,
      maxTokens: 4096,
      stop: ['END'],
    })
  })

  test('a switch keeps the reasoningEffort the options set', () => {
    const seed = resolveCallConfig({
      lastHeader: logged,
      options: { model: 'm2', reasoningEffort: 'low' },
      firstRequestOfDriver: true,
    })
    expect(seed).toEqual({
      provider: 'mock',
      model: 'm2',
      reasoningEffort: 'low',
      temperature: 0.5,
      maxTokens: 4096,
      stop: ['END'],
    })
  })

  test('options naming the logged provider and model are no switch: the effort stays', () => {
    const seed = resolveCallConfig({
      lastHeader: logged,
      options: { provider: 'mock', model: 'm1' },
      firstRequestOfDriver: true,
    })
    expect(seed.reasoningEffort).toBe('high')
  })
})

describe('later requests', () => {
  test('use the logged config minus adapter defaults and ignore the options', () => {
    const options: CallConfigOptions = { provider: 'p', model: 'm', temperature: 2 }
    expect(resolveCallConfig({ lastHeader: logged, options, firstRequestOfDriver: false })).toEqual(logged.config)
    expect(resolveCallConfig({ lastHeader: withDefaults, options, firstRequestOfDriver: false })).toEqual({
      provider: 'mock',
      model: 'm1',
      temperature: 0.5,
    })
  })

  test('a listener switch logged in the header persists', () => {
    const switched: RequestHeader = { config: { provider: 'mock', model: 'other-model' } }
    const seed = resolveCallConfig({
      lastHeader: switched,
      options: { provider: 'mock', model: 'm1' },
      firstRequestOfDriver: false,
    })
    expect(seed).toEqual({ provider: 'mock', model: 'other-model' })
  })

  test('without a logged header the options still apply', () => {
    expect(
      resolveCallConfig({ lastHeader: undefined, options: { provider: 'p', model: 'm' }, firstRequestOfDriver: false }),
    ).toEqual({
      provider: 'p',
      model: 'm',
    })
  })
})

describe('the seed is a deep-frozen clone', () => {
  test('mutating the seed or its stop array throws TypeError', () => {
    const seed = resolveCallConfig({
      lastHeader: undefined,
      options: { provider: 'p', model: 'm', stop: ['a'] },
      firstRequestOfDriver: true,
    })
    expect(Object.isFrozen(seed)).toBe(true)
    expect(Object.isFrozen(seed.stop)).toBe(true)
    expect(() => {
      ;(seed as { model: string }).model = 'x'
    }).toThrow(TypeError)
    expect(() => (seed.stop as string[]).push('b')).toThrow(TypeError)
  })

  test('the options and the header are neither referenced nor frozen', () => {
    const stop = ['a']
    const options = { provider: 'p', model: 'm', stop }
    const seed = resolveCallConfig({ lastHeader: undefined, options, firstRequestOfDriver: true })
    expect(seed.stop).not.toBe(stop)
    expect(Object.isFrozen(options)).toBe(false)
    expect(Object.isFrozen(stop)).toBe(false)
    stop.push('later')
    expect(seed.stop).toEqual(['a'])
    const header: RequestHeader = { config: { provider: 'mock', model: 'm1', stop: ['END'] } }
    expect(resolveCallConfig({ lastHeader: header, options: {}, firstRequestOfDriver: false }).stop).not.toBe(
      header.config.stop,
    )
  })

  test('frozenCallConfig clones in CallConfig order, drops undefined values and keeps unknown keys last', () => {
    const input = { extra: 1, stop: ['s'], model: 'm', provider: 'p', temperature: undefined }
    const frozen = frozenCallConfig(input)
    expect(frozen).toEqual({ provider: 'p', model: 'm', stop: ['s'], extra: 1 })
    expect(Object.keys(frozen)).toEqual(['provider', 'model', 'stop', 'extra'])
    expect(Object.isFrozen(frozen)).toBe(true)
    expect(Object.isFrozen(frozen.stop)).toBe(true)
    expect(frozen.stop).not.toBe(input.stop)
    expect(Object.isFrozen(input)).toBe(false)
    expect(Object.isFrozen(input.stop)).toBe(false)
  })
})

describe('checkCallConfig', () => {
  test('returns a config with provider and model as it is', () => {
    const config = { provider: 'p', model: 'm', maxTokens: 5 }
    expect(checkCallConfig(config)).toBe(config)
  })

  test('no provider and no model: MissingModelError naming both, the options and the agent/request waterfall', () => {
    const error = expectThrowsMissing(() => checkCallConfig({ temperature: 1 }), ['provider', 'model'])
    expect(error.message).toContain('provider')
    expect(error.message).toContain('agent/request')
    expect(error.message).toContain('AgentOptions')
    expect(Object.isFrozen(error.missing)).toBe(true)
  })

  test.each([
    ['provider', { model: 'm' }],
    ['model', { provider: 'p' }],
  ])('only %s missing is reported alone', (missing, config) => {
    expectThrowsMissing(() => checkCallConfig(config), [missing])
  })

  test('a seed resolved from empty options fails the check', () => {
    const seed = resolveCallConfig({ lastHeader: undefined, options: {}, firstRequestOfDriver: true })
    expectThrowsMissing(() => checkCallConfig(seed), ['provider', 'model'])
  })
})
