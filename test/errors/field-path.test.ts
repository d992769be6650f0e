/**
 * fieldPath: the one path form of error messages and `field` properties (`a.b[0].c`).
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { InvalidOptionsError } from 'yoke'
import { fieldPath, joinField } from '../../src/errors/issue.js'

describe('fieldPath', () => {
  test.each([
    [[], ''],
    [['maxTokens'], 'maxTokens'],
    [['messages', 0, 'role'], 'messages[0].role'],
    [['messages', 2, 'content', 0, 'text'], 'messages[2].content[0].text'],
    [['stop', 1], 'stop[1]'],
    [[0, 'name'], '[0].name'],
    [['headers', 'x-trace'], 'headers["x-trace"]'],
    [['a', Symbol('s')], 'a[Symbol(s)]'],
  ] as const)('%j → %s', (path, rendered) => {
    expect(fieldPath(path)).toBe(rendered)
  })

  test('joinField joins a rendered parent and a rendered relative path', () => {
    expect(joinField('messages[0]', 'role')).toBe('messages[0].role')
    expect(joinField('tools', '[1].name')).toBe('tools[1].name')
    expect(joinField('options', '')).toBe('options')
    expect(joinField('', 'maxTokens')).toBe('maxTokens')
  })

  test('InvalidOptionsError names its field and message in bracket form', () => {
    const error = new InvalidOptionsError({
      issues: [{ path: ['tools', 0, 'name'], message: 'must be a string' }],
      value: 1,
    })
    expect(error.field).toBe('tools[0].name')
    expect(error.message).toBe('options.tools[0].name: must be a string')
  })
})
