import fc from 'fast-check'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../src/errors/codes.js'
import { SessionEventError } from '../../src/errors/session-event-error.js'
import type { JsonValue } from '../../src/session/json-value.js'
import { canonicalJson } from '../../src/session/snapshot/canonical-json.js'
import { jsonEquals } from '../../src/session/snapshot/json-equals.js'
import { isJsonValue, snapshotJson } from '../../src/session/snapshot/snapshot-json.js'
import { isDeepFrozen } from '../helpers/outcomes.js'

const DEEP = 20_000

function rejectionOf(value: unknown, root = 'data'): SessionEventError {
  try {
    snapshotJson(value, root)
  } catch (error) {
    if (SessionEventError.is(error)) return error
    throw error
  }
  throw new Error('expected snapshotJson to reject')
}

/** Every object and array reachable from `value`, iteratively. */
function containersOf(value: unknown): object[] {
  const found: object[] = []
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next !== 'object' || next === null) continue
    found.push(next)
    pending.push(...Object.values(next))
  }
  return found
}

function selfCycle(): Record<string, unknown> {
  const value: Record<string, unknown> = {}
  value['self'] = value
  return value
}

function nestObjects(depth: number): { root: Record<string, unknown>; deepest: Record<string, unknown> } {
  const deepest: Record<string, unknown> = { leaf: true }
  let root = deepest
  for (let level = 0; level < depth; level++) root = { child: root }
  return { root, deepest }
}

function deepestOf(value: unknown, key: string | number): unknown {
  let current = value
  while (true) {
    const next: unknown = (current as Record<string | number, unknown>)[key]
    if (typeof next !== 'object' || next === null) return current
    current = next
  }
}

/** Rebuilds `value` with every object's keys inserted in an order derived from `seed`. */
function shuffleKeys(value: JsonValue, seed: number): JsonValue {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map((item: JsonValue) => shuffleKeys(item, seed + 1))
  const keys = Object.keys(value)
  let state = seed
  for (let index = keys.length - 1; index > 0; index--) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    const other = state % (index + 1)
    ;[keys[index], keys[other]] = [keys[other]!, keys[index]!]
  }
  const copy: Record<string, JsonValue> = {}
  for (const key of keys)
    Object.defineProperty(copy, key, {
      value: shuffleKeys((value as Record<string, JsonValue>)[key]!, seed + 7),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  return copy
}

function containsNegativeZero(value: unknown): boolean {
  if (Object.is(value, -0)) return true
  return typeof value === 'object' && value !== null && Object.values(value).some(containsNegativeZero)
}

/** `fc.jsonValue()` without `-0` (a JSON round trip turns it into `0`). */
const losslessJson = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as JsonValue)

describe('snapshotJson rejections', () => {
  it.each([
    ['a bigint', 1n, 'data', 'bigint'],
    ['a function', () => 1, 'data', 'function'],
    ['a symbol', Symbol(), 'data', 'symbol'],
    ['a Map', new Map(), 'data', 'not a plain object'],
    ['undefined', undefined, 'data', 'undefined'],
    ['Infinity', Number.POSITIVE_INFINITY, 'data', 'non-finite number'],
    ['NaN', Number.NaN, 'data', 'non-finite number'],
    ['-0', -0, 'data', 'negative zero'],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    ['a sparse array', [1, , 3], 'data[1]', 'sparse array'],
    ['a bigint element', [1, 2n, 3], 'data[1]', 'bigint'],
    ['a method', { a: { b() {} } }, 'data.a.b', 'function'],
    ['a self cycle', selfCycle(), 'data.self', 'cycle'],
  ])('rejects %s with NOT_JSON at the first offending path', (_label, value, path, reason) => {
    const error = rejectionOf(value)
    expect(error.code).toBe(ErrorCode.NOT_JSON)
    expect(error.path).toBe(path)
    expect(error.reason).toBe(reason)
    expect(error.message).toContain(path)
  })
})

describe('snapshotJson rejections (other cases)', () => {
  class Point {
    x = 1
  }
  class List extends Array<number> {}
  const symbolKey = Symbol('tag')

  it.each([
    ['a Set', new Set([1]), 'data', 'not a plain object'],
    ['a Date', new Date(0), 'data', 'not a plain object'],
    ['a class instance', new Point(), 'data', 'not a plain object'],
    ['a forged null-prototype chain', Object.create(Object.create(null)), 'data', 'not a plain object'],
    ['an object whose prototype is a plain object', Object.create({}), 'data', 'not a plain object'],
    ['a boxed string', Object('x'), 'data', 'not a plain object'],
    ['an array subclass', List.from([1]), 'data', 'array subclass'],
    ['an array with an object prototype', Object.setPrototypeOf([1], Object.prototype), 'data', 'array subclass'],
    ['an array whose prototype is another array', Object.setPrototypeOf([1], []), 'data', 'array subclass'],
    ['an extra array key', Object.assign([1, 2], { extra: true }), 'data.extra', 'extra array key'],
    ['a non-identifier extra array key', Object.assign([1], { '-1': 0 }), 'data["-1"]', 'extra array key'],
    ['a symbol key on an array', Object.assign([1], { [symbolKey]: 1 }), 'data[Symbol(tag)]', 'symbol key'],
    ['a symbol key on an object', { a: 1, [symbolKey]: 2 }, 'data[Symbol(tag)]', 'symbol key'],
    [
      'a non-enumerable key',
      Object.defineProperty({ a: 1 }, 'hidden', { value: 2 }),
      'data.hidden',
      'non-enumerable key',
    ],
    ['an undefined property', { a: 1, b: undefined }, 'data.b', 'undefined'],
    ['an undefined element', [null, undefined], 'data[1]', 'undefined'],
    ['a non-identifier key', { 'a-b': { c: Number.NaN } }, 'data["a-b"].c', 'non-finite number'],
    ['a deep content block', { message: { content: [{ text: 1n }] } }, 'data.message.content[0].text', 'bigint'],
    [
      'a cycle through an array',
      (() => {
        const list: unknown[] = []
        list.push({ back: list })
        return list
      })(),
      'data[0].back',
      'cycle',
    ],
    ['a toJSON method', { toJSON: () => 1 }, 'data.toJSON', 'function'],
    ['a foreign Map', runInNewContext('new Map()'), 'data', 'not a plain object'],
    ['a foreign class instance', runInNewContext('new (class Point { x = 1 })()'), 'data', 'not a plain object'],
    ['a foreign forged prototype', runInNewContext('Object.create(Object.create(null))'), 'data', 'not a plain object'],
    ['a foreign array subclass', runInNewContext('class List extends Array {}; List.of(1)'), 'data', 'array subclass'],
    ['a foreign sparse array', runInNewContext('[1, , 3]'), 'data[1]', 'sparse array'],
    [
      'a proxy that reports a bad array length',
      new Proxy([1], { get: (target, key) => (key === 'length' ? 'x' : Reflect.get(target, key)) }),
      'data',
      'invalid array length',
    ],
  ])('rejects %s', (_label, value, path, reason) => {
    const error = rejectionOf(value)
    expect([error.path, error.reason]).toEqual([path, reason])
  })

  it('reports the first offending value in walk order', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole comes after the bigint
    expect(rejectionOf([1, 2n, , 4]).path).toBe('data[1]')
    expect(rejectionOf({ a: [1, { b: undefined }], c: 1n }).path).toBe('data.a[1].b')
  })

  it('detects a cycle far below the root and accepts a deep DAG', () => {
    const nodes: Record<string, unknown>[] = []
    for (let level = 0; level < 100; level++) nodes.push({})
    for (let level = 0; level < 99; level++) nodes[level]!['next'] = nodes[level + 1]
    nodes[99]!['back'] = nodes[50]
    const error = rejectionOf(nodes[0])
    expect(error.reason).toBe('cycle')
    expect(error.path).toBe(`data${'.next'.repeat(99)}.back`)

    const shared = { x: 1 }
    let chain: Record<string, unknown> = { shared }
    for (let level = 0; level < 100; level++) chain = { shared, next: chain }
    expect(isJsonValue(chain)).toBe(true)
  })

  it('throws a SessionEventError that names the root and the location', () => {
    const error = rejectionOf({ a: 1n }, 'options')
    expect(error).toBeInstanceOf(SessionEventError)
    expect(error.path).toBe('options.a')
    const bare = (() => {
      try {
        snapshotJson(undefined)
      } catch (caught) {
        return caught as SessionEventError
      }
      throw new Error('expected a rejection')
    })()
    expect(bare.path).toBe('value')
    try {
      snapshotJson([1n], 'data', { sessionId: 's1', type: 'test/note', seq: 3 })
      expect.unreachable()
    } catch (caught) {
      const located = caught as SessionEventError
      expect([located.sessionId, located.type, located.seq, located.path]).toEqual(['s1', 'test/note', 3, 'data[0]'])
      expect(located.message).toBe('session "s1": test/note at seq 3: data[0] is not lossless JSON (bigint)')
    }
  })
})

describe('isJsonValue', () => {
  it.each([
    ['-0', -0],
    ['a Date', new Date(0)],
    ['Object.create({})', Object.create({})],
    ['a nested bigint', { a: [1, 2n] }],
    ['a cycle', selfCycle()],
    ['undefined', undefined],
  ])('is false for %s', (_label, value) => {
    expect(isJsonValue(value)).toBe(false)
  })

  it.each([
    ['0', 0],
    ["''", ''],
    ['null', null],
    ['[]', []],
    ['{}', {}],
    ['Object.create(null)', Object.create(null)],
    ['a nested value', { a: [1, 'x', true, null, { b: -1.5 }] }],
    ['a foreign object', runInNewContext('({ a: [1, { b: 2 }] })')],
  ])('is true for %s', (_label, value) => {
    expect(isJsonValue(value)).toBe(true)
  })
})

describe('snapshotJson copies', () => {
  it('returns primitives as they are', () => {
    for (const value of [null, true, false, 0, 1.5, -3, '', 'text']) expect(snapshotJson(value)).toBe(value)
  })

  it('returns a deep-frozen copy and leaves the caller value unchanged and unfrozen', () => {
    const input = { a: [1, { b: 'x' }], c: { d: null } }
    const before = structuredClone(input)
    const copy = snapshotJson(input, 'data')
    expect(copy).toEqual(input)
    expect(copy).not.toBe(input)
    expect((copy as { a: unknown }).a).not.toBe(input.a)
    expect(isDeepFrozen(copy)).toBe(true)
    expect(containersOf(input).some((container) => Object.isFrozen(container))).toBe(false)
    expect(input).toEqual(before)
  })

  it('accepts 20 000 nested objects and arrays with the deepest node frozen', () => {
    const { root, deepest } = nestObjects(DEEP)
    const copy = snapshotJson(root, 'data')
    const deepestCopy = deepestOf(copy, 'child')
    expect(deepestCopy).toEqual(deepest)
    expect(deepestCopy).not.toBe(deepest)
    expect(Object.isFrozen(deepestCopy)).toBe(true)
    expect(Object.isFrozen(deepest)).toBe(false)
    expect(isJsonValue(root)).toBe(true)

    let array: unknown[] = [1]
    for (let level = 0; level < DEEP; level++) array = [array]
    const arrayCopy = snapshotJson(array)
    const innermost = deepestOf(arrayCopy, 0)
    expect(innermost).toEqual([1])
    expect(Object.isFrozen(innermost)).toBe(true)
  })

  it('rejects a cycle at the bottom of a 20 000-level nest without a RangeError', () => {
    const { root, deepest } = nestObjects(DEEP)
    deepest['loop'] = root
    const error = rejectionOf(root)
    expect(error.reason).toBe('cycle')
    expect(error.path).toBe(`data${'.child'.repeat(DEEP)}.loop`)
  })

  it('accepts objects and arrays of another realm and copies them into plain ones', () => {
    const foreign: unknown = runInNewContext('({ a: [1, { b: 2 }], c: Object.create(null) })')
    expect(Object.getPrototypeOf(foreign)).not.toBe(Object.prototype)
    const copy = snapshotJson(foreign) as { a: unknown[]; c: object }
    expect(copy).toEqual({ a: [1, { b: 2 }], c: {} })
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.getPrototypeOf(copy.a)).toBe(Array.prototype)
    expect(snapshotJson(runInNewContext('[1, 2]'))).toEqual([1, 2])
  })

  it('accepts null-prototype objects and proxies of plain values', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
    const copy = snapshotJson(bare)
    expect(copy).toEqual({ a: 1 })
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(snapshotJson(new Proxy({ a: [1, 2] }, {}))).toEqual({ a: [1, 2] })
    expect(snapshotJson(new Proxy([1, { b: 2 }], {}))).toEqual([1, { b: 2 }])
  })

  it('reads each getter exactly once and stores the value it validated', () => {
    let objectReads = 0
    let arrayReads = 0
    const input = {
      get value() {
        objectReads += 1
        return objectReads === 1 ? 'first' : 1n
      },
    }
    const list = Object.defineProperty([0], 0, {
      get() {
        arrayReads += 1
        return arrayReads === 1 ? { n: 1 } : undefined
      },
      enumerable: true,
    })
    expect(snapshotJson({ input, list })).toEqual({ input: { value: 'first' }, list: [{ n: 1 }] })
    expect([objectReads, arrayReads]).toEqual([1, 1])

    let laterReads = 0
    const flipped = {
      get value() {
        laterReads += 1
        return laterReads === 1 ? 1n : 'fine'
      },
    }
    expect(rejectionOf(flipped).path).toBe('data.value')
    expect(laterReads).toBe(1)
  })

  it('propagates a throwing getter error unchanged', () => {
    const failure = new Error('getter failed')
    const input = {
      get broken(): never {
        throw failure
      },
    }
    expect(() => snapshotJson({ nested: input })).toThrow(failure)
    try {
      isJsonValue(input)
      expect.unreachable()
    } catch (caught) {
      expect(caught).toBe(failure)
    }
  })

  it('keeps an own __proto__ key as data without changing the prototype', () => {
    const input = JSON.parse('{"a":1,"__proto__":{"polluted":true},"constructor":2,"toString":3}') as object
    const copy = snapshotJson(input)
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy as object)).toEqual(['a', '__proto__', 'constructor', 'toString'])
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true })
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined()
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined()
  })

  it('copies a shared sub-object (a DAG) separately', () => {
    const shared = { x: [1] }
    const copy = snapshotJson({ a: shared, b: shared, list: [shared, shared] }) as Record<string, unknown>
    const list = copy['list'] as unknown[]
    expect(copy['a']).toEqual(shared)
    expect(copy['a']).not.toBe(copy['b'])
    expect(list[0]).not.toBe(list[1])
    expect(isDeepFrozen(copy)).toBe(true)
  })

  it('preserves key order', () => {
    const input = { b: 1, a: 2, 10: 3, 2: 4, z: { y: 1, x: 2 } }
    const copy = snapshotJson(input) as Record<string, Record<string, unknown>>
    expect(Object.keys(copy)).toEqual(Object.keys(input))
    expect(Object.keys(copy['z']!)).toEqual(['y', 'x'])
  })

  it('treats a toJSON key as plain data', () => {
    const input = { toJSON: 'not a method', value: '2024-01-01' }
    expect(snapshotJson(input)).toEqual(input)
  })

  it('accepts non-enumerable array elements, which JSON still reads', () => {
    expect(snapshotJson(Object.defineProperty([1, 2], 0, { enumerable: false }))).toEqual([1, 2])
  })
})

describe('jsonEquals', () => {
  it.each([
    [{ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }, true],
    [[1, 2], [1, 2], true],
    [null, null, true],
    ['x', 'x', true],
    [[1, 2], [2, 1], false],
    [[1], [1, 1], false],
    [{ a: 1 }, { b: 1 }, false],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{}, [], false],
    [null, {}, false],
    [1, '1', false],
    [{ a: { b: 1 } }, { a: { b: 2 } }, false],
  ] as [JsonValue, JsonValue, boolean][])('compares %j and %j as %s', (left, right, equal) => {
    expect(jsonEquals(left, right)).toBe(equal)
    expect(jsonEquals(right, left)).toBe(equal)
  })

  it('compares an own __proto__ key as data', () => {
    const left = JSON.parse('{"__proto__":1}') as JsonValue
    expect(jsonEquals(left, JSON.parse('{"__proto__":1}') as JsonValue)).toBe(true)
    expect(jsonEquals(left, {})).toBe(false)
    expect(jsonEquals({}, left)).toBe(false)
  })

  it('compares 20 000-level nests without a RangeError', () => {
    const left = snapshotJson(nestObjects(DEEP).root)
    const right = snapshotJson(nestObjects(DEEP).root)
    expect(jsonEquals(left, right)).toBe(true)
    const { root, deepest } = nestObjects(DEEP)
    deepest['leaf'] = false
    expect(jsonEquals(left, snapshotJson(root))).toBe(false)
  })
})

describe('canonicalJson', () => {
  it.each([
    [null, 'null'],
    [1.5, '1.5'],
    ['a"b', '"a\\"b"'],
    [[], '[]'],
    [{}, '{}'],
    [{ b: 1, a: [3, { d: 1, c: 2 }] }, '{"a":[3,{"c":2,"d":1}],"b":1}'],
    [{ B: 1, a: 2, _: 3 }, '{"B":1,"_":3,"a":2}'],
  ] as [JsonValue, string][])('renders %j as %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text)
  })

  it('renders an own __proto__ key', () => {
    expect(canonicalJson(JSON.parse('{"z":1,"__proto__":{"b":1,"a":2}}') as JsonValue)).toBe(
      '{"__proto__":{"a":2,"b":1},"z":1}',
    )
  })

  it('renders a 20 000-level nest without a RangeError', () => {
    const text = canonicalJson(snapshotJson(nestObjects(DEEP).root))
    expect(text.startsWith('{"child":{"child":')).toBe(true)
    expect(text.endsWith('{"leaf":true}'.concat('}'.repeat(DEEP)))).toBe(true)
  })
})

describe('properties', () => {
  it('snapshotJson copies any JSON value deep-equal and deep-frozen', () => {
    fc.assert(
      fc.property(losslessJson, (value) => {
        const copy = snapshotJson(value)
        expect(copy).toStrictEqual(value)
        expect(jsonEquals(copy, value)).toBe(true)
        expect(isDeepFrozen(copy)).toBe(true)
        expect(isJsonValue(value)).toBe(true)
      }),
    )
  })

  it('isJsonValue rejects exactly the generated values that contain -0', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(isJsonValue(value)).toBe(!containsNegativeZero(value))
      }),
    )
  })

  it('canonicalJson and jsonEquals ignore key order', () => {
    fc.assert(
      fc.property(losslessJson, fc.nat(), (value, seed) => {
        const shuffled = shuffleKeys(value, seed)
        expect(canonicalJson(shuffled)).toBe(canonicalJson(value))
        expect(jsonEquals(shuffled, value)).toBe(true)
        expect(JSON.parse(canonicalJson(value))).toStrictEqual(value)
      }),
    )
  })

  it('jsonEquals agrees with canonicalJson text equality', () => {
    fc.assert(
      fc.property(losslessJson, losslessJson, (left, right) => {
        expect(jsonEquals(left, right)).toBe(canonicalJson(left) === canonicalJson(right))
      }),
    )
  })
})

describe('jsonEquals and canonicalJson on values that are not JSON', () => {
  it('a cyclic value: jsonEquals terminates; canonicalJson throws InvalidArgumentError', () => {
    const a: Record<string, unknown> = { x: 1 }
    a['self'] = a
    const b: Record<string, unknown> = { x: 1 }
    b['self'] = b
    const c: Record<string, unknown> = { x: 2 }
    c['self'] = c
    expect(jsonEquals(a as never, b as never)).toBe(true)
    expect(jsonEquals(a as never, c as never)).toBe(false)
    expect(() => canonicalJson(a as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: 'value' }),
    )
  })

  it('a shared (acyclic) sub-value is fine; a bigint or undefined inside is InvalidArgumentError', () => {
    const shared = { k: [1, 2] }
    expect(canonicalJson({ b: shared, a: shared } as never)).toBe('{"a":{"k":[1,2]},"b":{"k":[1,2]}}')
    expect(() => canonicalJson(1n as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(() => canonicalJson({ a: undefined } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    )
  })
})
