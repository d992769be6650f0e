import { describe, expect, test } from 'vitest'
import { InvalidArgumentError, toolResult } from 'yoke'
import { normalizeToolReturn, toolErrorResult, toolResultMessage } from '../../src/tools/index.js'
import { toolResultMessageSchema } from '../../src/session/index.js'
import { thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'

describe('toolResultMessage', () => {
  test('a success: role user, tool source, one tool-result block with isError: false', () => {
    const image = { type: 'image', mediaType: 'image/png', uri: 'https://example.test/a.png' } as const
    const message = toolResultMessage(
      'm-1',
      'call-1',
      normalizeToolReturn(toolResult({ content: [{ type: 'text', text: 'done' }, image] }), 'read'),
    )
    expect(message).toEqual({
      id: 'm-1',
      role: 'user',
      content: [
        { type: 'tool-result', toolCallId: 'call-1', isError: false, content: [{ type: 'text', text: 'done' }, image] },
      ],
      source: { kind: 'tool', callId: 'call-1' },
    })
    expect(toolResultMessageSchema.safeParse(message).success).toBe(true)
  })

  test('an error result has isError: true on its block', () => {
    const message = toolResultMessage(
      'm-2',
      'call-2',
      toolErrorResult('UNKNOWN_TOOL', 'no tool named "nope" is available'),
    )
    expect(message.content[0]).toEqual({
      type: 'tool-result',
      toolCallId: 'call-2',
      isError: true,
      content: [{ type: 'text', text: 'Tool error (UNKNOWN_TOOL): no tool named "nope" is available' }],
    })
    expect(toolResultMessageSchema.safeParse(message).success).toBe(true)
  })

  test("a tool's own isError result and an empty success", () => {
    expect(
      toolResultMessage('m-3', 'c', normalizeToolReturn(toolResult({ content: 'bad', isError: true }), 't')).content[0]
        .isError,
    ).toBe(true)
    const empty = toolResultMessage('m-4', 'c', normalizeToolReturn(undefined, 't'))
    expect(empty.content[0].content).toEqual([])
    expect(toolResultMessageSchema.safeParse(empty).success).toBe(true)
  })

  test('the message is frozen and owns its content list', () => {
    const result = normalizeToolReturn('x', 't')
    const message = toolResultMessage('m-5', 'c', result)
    expect(Object.isFrozen(message)).toBe(true)
    expect(Object.isFrozen(message.content)).toBe(true)
    expect(Object.isFrozen(message.content[0])).toBe(true)
    expect(Object.isFrozen(message.content[0].content)).toBe(true)
    expect(Object.isFrozen(message.source)).toBe(true)
    expect(message.content[0].content).not.toBe(result.content)
  })
})

describe('toolResultMessage refuses bad arguments with InvalidArgumentError', () => {
  const result = normalizeToolReturn('done', 't')

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 7],
  ])('an id that is %s: argument id with the value', (_name, id) => {
    expectError(
      thrownBy(() => toolResultMessage(id as never, 'call-1', result)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'id', value: id },
    )
  })

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 7],
  ])('a callId that is %s: argument callId with the value', (_name, callId) => {
    expectError(
      thrownBy(() => toolResultMessage('m-1', callId as never, result)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'callId',
        value: callId,
      },
    )
  })

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'done'],
    ['an object without content', { isError: false }],
    ['content that is not an array', { content: 'done', isError: false }],
  ])('a result that is %s: argument result with the value', (_name, bad) => {
    const error = expectError(
      thrownBy(() => toolResultMessage('m-1', 'call-1', bad as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'result',
      },
    )
    expect(error.value).toBe(bad)
  })

  test('the arguments are checked in order (id, callId, result); good ones still make the message', () => {
    expectError(
      thrownBy(() => toolResultMessage(1 as never, 2 as never, null as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'id' },
    )
    expectError(
      thrownBy(() => toolResultMessage('m-1', 2 as never, null as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'callId' },
    )
    const message = toolResultMessage('m-9', 'call-9', result)
    expect(message.source).toEqual({ kind: 'tool', callId: 'call-9' })
    expect(message.content[0].content).toEqual([{ type: 'text', text: 'done' }])
  })
})
