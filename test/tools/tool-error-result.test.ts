import { describe, expect, test } from 'vitest'
import {
  ErrorCode,
  InvalidArgumentError,
  ToolAbortedError,
  ToolArgumentsError,
  ToolDeniedError,
  ToolFailedError,
  ToolSchedulerError,
  ToolTimeoutError,
  UnknownToolError,
  toolResult,
} from 'yoke'
import {
  normalizeToolReturn,
  resultErrorOf,
  thrownMessage,
  type ToolResultCode,
  toolErrorName,
  toolErrorResult,
} from '../../src/tools/index.js'
import { thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'

/** Every code, its `name`, and an example message. */
const table: readonly (readonly [ToolResultCode, string, string])[] = [
  ['UNKNOWN_TOOL', 'UnknownToolError', 'no tool named "nope" is available'],
  ['INVALID_ARGUMENTS', 'ToolArgumentsError', 'arguments for "read" are not a valid JSON object'],
  ['TOOL_DENIED', 'ToolDeniedError', '"t" was denied by policy'],
  ['TOOL_FAILED', 'ToolFailedError', 'exploded'],
  ['TOOL_TIMEOUT', 'ToolTimeoutError', '"t" did not finish within 50 ms'],
  ['TOOL_ABORTED_BEFORE_DISPATCH', 'ToolAbortedError', 'the call to "t" was cancelled before it started'],
  ['TOOL_ABORTED', 'ToolAbortedError', 'the call to "t" was cancelled while it was running'],
  [
    'TOOL_SCHEDULER_FAILED',
    'ToolSchedulerError',
    'the call to "t" was not completed because the tool scheduler failed',
  ],
]

describe('toolErrorResult and toolErrorName', () => {
  test.each(table)('%s → name %s and content "Tool error (<CODE>): <message>"', (code, name, message) => {
    expect(toolErrorName(code)).toBe(name)
    const result = toolErrorResult(code, message)
    expect(result).toEqual({
      content: [{ type: 'text', text: `Tool error (${code}): ${message}` }],
      isError: true,
      error: { code, message },
      concludesTurn: false,
      additionalContexts: [],
    })
    expect(Object.hasOwn(result, 'meta')).toBe(false)
    expect(resultErrorOf(result)).toEqual({ name, code })
  })

  test('every name is an exported error class of that code', () => {
    const classes = {
      UnknownToolError,
      ToolArgumentsError,
      ToolDeniedError,
      ToolFailedError,
      ToolTimeoutError,
      ToolAbortedError,
      ToolSchedulerError,
    }
    for (const [code, name] of table) {
      const errorClass = classes[name as keyof typeof classes]
      expect(errorClass.brand).toBe(name)
      expect(Object.values(ErrorCode)).toContain(code)
    }
  })

  test('the text for an unknown tool', () => {
    const result = toolErrorResult('UNKNOWN_TOOL', 'no tool named "nope" is available')
    expect(result.content).toEqual([
      { type: 'text', text: 'Tool error (UNKNOWN_TOOL): no tool named "nope" is available' },
    ])
    expect(resultErrorOf(result)).toEqual({ name: 'UnknownToolError', code: 'UNKNOWN_TOOL' })
  })

  test('meta and additional contexts are kept; the result, content and contexts are frozen', () => {
    const contexts = ['ctx-c1', [{ type: 'text', text: 'more' }] as const]
    const result = toolErrorResult('TOOL_ABORTED', 'the call to "t" was cancelled while it was running', {
      meta: { 'yoke:abandoned': true },
      additionalContexts: contexts,
    })
    expect(result.meta).toEqual({ 'yoke:abandoned': true })
    expect(result.additionalContexts).toEqual(['ctx-c1', [{ type: 'text', text: 'more' }]])
    expect(result.additionalContexts).not.toBe(contexts)
    expect(Object.isFrozen(result)).toBe(true)
    expect(Object.isFrozen(result.content)).toBe(true)
    expect(Object.isFrozen(result.content[0])).toBe(true)
    expect(Object.isFrozen(result.additionalContexts)).toBe(true)
    expect(Object.isFrozen(result.error)).toBe(true)
  })

  test('undefined extras are omitted', () => {
    const result = toolErrorResult('TOOL_FAILED', 'x', { meta: undefined, additionalContexts: undefined })
    expect(Object.hasOwn(result, 'meta')).toBe(false)
    expect(result.additionalContexts).toEqual([])
  })
})

describe('resultErrorOf', () => {
  test('a success has no error', () => {
    expect(resultErrorOf(normalizeToolReturn('ok', 't'))).toBeUndefined()
  })

  test("a tool's own isError result is TOOL_FAILED / ToolFailedError", () => {
    const result = normalizeToolReturn(toolResult({ content: 'it broke', isError: true }), 't')
    expect(result.error).toBeUndefined()
    expect(resultErrorOf(result)).toEqual({ name: 'ToolFailedError', code: 'TOOL_FAILED' })
  })

  test("a middleware's error code decides the name", () => {
    const result = normalizeToolReturn(
      { content: 'nope', isError: true, error: { code: 'TOOL_DENIED', message: 'nope' } },
      't',
      { allowError: true },
    )
    expect(resultErrorOf(result)).toEqual({ name: 'ToolDeniedError', code: 'TOOL_DENIED' })
  })

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'Tool error (TOOL_FAILED): x'],
    ['a boolean', true],
  ])('a result that is %s throws InvalidArgumentError argument result with the value', (_name, result) => {
    expectError(
      thrownBy(() => resultErrorOf(result as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'result', value: result },
    )
  })
})

describe('thrownMessage (the TOOL_FAILED message rule)', () => {
  test("an Error's message", () => {
    expect(thrownMessage(new Error('exploded'))).toBe('exploded')
    expect(thrownMessage(new TypeError('bad type'))).toBe('bad type')
    expect(thrownMessage(new Error(''))).toBe('')
  })

  test("a HarnessError's message", () => {
    const error = new InvalidArgumentError({ argument: 'progress', reason: 'not JSON' })
    expect(thrownMessage(error)).toBe('invalid progress: not JSON')
    expect(thrownMessage(new ToolFailedError({ toolName: 't', message: 'inner failure' }))).toBe('inner failure')
  })

  test('an Error from another realm is still an Error', async () => {
    const { runInNewContext } = await import('node:vm')
    const foreign: unknown = runInNewContext("new Error('from elsewhere')")
    expect(foreign instanceof Error).toBe(false)
    expect(thrownMessage(foreign)).toBe('from elsewhere')
  })

  test.each([
    ['a string', 'plain text', 'plain text'],
    ['a number', 42, '42'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a symbol', Symbol('s'), 'Symbol(s)'],
    ['an object', { reason: 'x' }, '[object Object]'],
    ['an object with toString', { toString: () => 'custom text' }, 'custom text'],
  ])('a non-Error (%s) gives String(value)', (_label, value, expected) => {
    expect(thrownMessage(value)).toBe(expected)
  })

  test('a hostile Proxy whose String() throws gives (unprintable thrown value)', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap')
        },
        getPrototypeOf() {
          throw new Error('trap')
        },
      },
    )
    expect(() => String(hostile)).toThrow()
    expect(thrownMessage(hostile)).toBe('(unprintable thrown value)')
  })

  test('an object whose toString throws, and a null-prototype object, give (unprintable thrown value)', () => {
    expect(
      thrownMessage({
        toString() {
          throw new Error('no')
        },
      }),
    ).toBe('(unprintable thrown value)')
    expect(thrownMessage(Object.create(null))).toBe('(unprintable thrown value)')
  })

  test('an Error whose message getter throws falls back to String(value)', () => {
    const error = new Error('hidden')
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('getter')
      },
    })
    expect(() => thrownMessage(error)).not.toThrow()
    expect(thrownMessage(error)).toBe('(unprintable thrown value)')
  })

  test('an Error with a non-string message falls back to String(value)', () => {
    const error = new Error('x')
    Object.defineProperty(error, 'message', { value: 7 })
    expect(thrownMessage(error)).toBe('Error: 7')
  })
})
