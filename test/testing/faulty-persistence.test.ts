import { describe, expect, test } from 'vitest'
import { InvalidArgumentError, InvalidOptionsError, memoryPersistence } from 'yoke'
import { faultyPersistence } from 'yoke/testing'
import { thrownBy } from '../helpers/outcomes.js'

describe('faultyPersistence arguments', () => {
  test.each([[null], [42], [{ name: 'x' }]])(
    'an inner adapter %o that is not a PersistenceAdapter is InvalidArgumentError',
    (inner) => {
      const error = thrownBy(() => faultyPersistence(inner as never))
      expect(InvalidArgumentError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'inner', value: inner })
    },
  )

  test.each([
    [null, ''],
    [7, ''],
    [{ fails: () => undefined }, 'fails'],
    [{ fail: new Error('boom') }, 'fail'],
    [{ hold: Promise.resolve() }, 'hold'],
  ])('options %o → InvalidOptionsError at %j', (options, field) => {
    const error = thrownBy(() => faultyPersistence(memoryPersistence(), options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field })
  })

  test('valid hooks wrap the adapter', async () => {
    const adapter = faultyPersistence(memoryPersistence(), { fail: () => undefined, hold: () => undefined })
    expect((await adapter.list()).headers).toEqual([])
    expect(adapter.calls.map((call) => call.method)).toEqual(['list'])
  })
})
