import { expect, test } from 'vitest'
import { jsonText } from '../../src/session/json-text.js'
import type { JsonValue } from '../../src/session/json-value.js'

test('jsonText equals JSON.stringify for ordinary values', () => {
  const value: JsonValue = { z: 1, a: [true, null, 'ü😀', { b: -1.5 }], '': {}, q: [] }
  expect(jsonText(value)).toBe(JSON.stringify(value))
})

test('jsonText writes a value nested deeper than JSON.stringify can, with the same text', () => {
  const build = (levels: number): JsonValue => {
    let value: JsonValue = { leaf: ['x', 2] }
    for (let level = 0; level < levels; level++) value = level % 2 === 0 ? { k: value, n: level } : [value, level]
    return value
  }
  const deep = build(20_000)
  expect(() => JSON.stringify(deep)).toThrow(RangeError)
  const text = jsonText(deep)
  // The innermost 500 levels are the same structure JSON.stringify can still write.
  expect(text).toContain(JSON.stringify(build(500)))
  expect(text.endsWith(',19999]')).toBe(true)
  // V8's JSON.parse has no recursion limit: the text round-trips.
  expect(jsonText(JSON.parse(text) as JsonValue)).toBe(text)
})
