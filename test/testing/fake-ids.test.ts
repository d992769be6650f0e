import { describe, expect, test } from 'vitest'
import { InvalidOptionsError } from 'yoke'
import { fakeIds } from 'yoke/testing'

describe('fakeIds', () => {
  test('per kind: the first letter of the kind and a counter from 1', () => {
    const ids = fakeIds()
    expect(ids('session')).toBe('s1')
    expect(ids('session')).toBe('s2')
    expect(ids('compaction')).toBe('c1')
    expect(ids('message')).toBe('m1')
    expect(ids('session')).toBe('s3')
    expect(ids('compaction')).toBe('c2')
  })

  test('prefixes override the first letter of the kinds they name only', () => {
    const ids = fakeIds({ prefixes: { tool: 'call_', session: 'sess-' } })
    expect(ids('tool')).toBe('call_1')
    expect(ids('tool')).toBe('call_2')
    expect(ids('session')).toBe('sess-1')
    expect(ids('message')).toBe('m1')
  })

  test('an empty prefix is refused with InvalidOptionsError at prefixes.<kind>', () => {
    let caught: unknown
    try {
      fakeIds({ prefixes: { tool: '' } })
    } catch (error) {
      caught = error
    }
    expect(InvalidOptionsError.is(caught)).toBe(true)
    expect(caught).toMatchObject({ code: 'INVALID_OPTIONS', field: 'prefixes.tool', value: '' })
  })

  test('a prefix that is not a string is refused with InvalidOptionsError', () => {
    const prefixes = { message: 7 } as unknown as Record<string, string>
    expect(() => fakeIds({ prefixes })).toThrow(InvalidOptionsError)
    expect(() => fakeIds({ prefixes })).toThrow(/fakeIds options\.prefixes\.message: must be a non-empty string/)
  })

  test.each([
    [null, ''],
    [7, ''],
    [{ prefix: { tool: 't' } }, 'prefix'],
    [{ prefixes: 'call_' }, 'prefixes'],
    [{ prefixes: ['t'] }, 'prefixes'],
  ])('options %o → InvalidOptionsError at %j', (options, field) => {
    let caught: unknown
    try {
      fakeIds(options as never)
    } catch (error) {
      caught = error
    }
    expect(InvalidOptionsError.is(caught)).toBe(true)
    expect(caught).toMatchObject({ code: 'INVALID_OPTIONS', field })
  })

  test('two sources count independently', () => {
    const first = fakeIds()
    const second = fakeIds()
    expect(first('session')).toBe('s1')
    expect(first('session')).toBe('s2')
    expect(second('session')).toBe('s1')
    expect(first('session')).toBe('s3')
    expect(second('session')).toBe('s2')
  })

  test('a source built from the same options is deterministic', () => {
    const kinds = ['session', 'message', 'tool', 'session', 'compaction', 'message']
    const run = (): string[] => {
      const ids = fakeIds({ prefixes: { tool: 't_' } })
      return kinds.map((kind) => ids(kind))
    }
    expect(run()).toEqual(['s1', 'm1', 't_1', 's2', 'c1', 'm2'])
    expect(run()).toEqual(run())
  })
})
