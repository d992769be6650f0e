/**
 * `normalizeUserMessage`: strings and `{ content, source? }` become frozen,
 * detached `UserMessage` snapshots; every bad input throws `InvalidMessageError` naming its field.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, InvalidMessageError, SessionEventError, type UserMessageInput } from 'yoke'
import { normalizeUserMessage } from '../../src/agent/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen)
}

/** Runs `action`, expects an `InvalidMessageError`, returns it. */
function invalid(action: () => unknown): InvalidMessageError {
  try {
    action()
  } catch (error) {
    expect(InvalidMessageError.is(error), String(error)).toBe(true)
    const typed = error as InvalidMessageError
    expect(typed.code).toBe('INVALID_MESSAGE')
    return typed
  }
  throw new Error('expected an InvalidMessageError')
}

describe('normalizeUserMessage: valid input', () => {
  test('a string becomes one text block from the user', () => {
    expect(normalizeUserMessage('hi', 'm1')).toEqual({
      id: 'm1',
      role: 'user',
      content: [{ type: 'text', text: 'hi' }],
      source: { kind: 'user' },
    })
  })

  test('the empty string is one empty text block, kept verbatim', () => {
    expect(normalizeUserMessage('', 'm1').content).toEqual([{ type: 'text', text: '' }])
    expect(normalizeUserMessage('  a\n\tb  ', 'm1').content).toEqual([{ type: 'text', text: '  a\n\tb  ' }])
  })

  test('an object keeps its blocks in order; source defaults to the user', () => {
    const message = normalizeUserMessage(
      {
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', mediaType: 'image/png', uri: 'file:///a.png' },
        ],
      },
      'm2',
    )
    expect(message).toEqual({
      id: 'm2',
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image', mediaType: 'image/png', uri: 'file:///a.png' },
      ],
      source: { kind: 'user' },
    })
  })

  test('a plugin source is kept, with and without form', () => {
    expect(
      normalizeUserMessage({ content: [], source: { kind: 'plugin', plugin: 'acme/ctx', form: 'note' } }, 'm3').source,
    ).toEqual({
      kind: 'plugin',
      plugin: 'acme/ctx',
      form: 'note',
    })
    expect(normalizeUserMessage({ content: [], source: { kind: 'plugin', plugin: 'acme/ctx' } }, 'm4').source).toEqual({
      kind: 'plugin',
      plugin: 'acme/ctx',
    })
    expect(normalizeUserMessage({ content: [], source: { kind: 'user' } }, 'm5').source).toEqual({ kind: 'user' })
  })

  test('empty content is accepted, as user/message accepts it', () => {
    expect(normalizeUserMessage({ content: [] }, 'm1').content).toEqual([])
  })

  test('a null-prototype input object is accepted', () => {
    const input = Object.assign(Object.create(null) as object, {
      content: [{ type: 'text', text: 'x' }],
    }) as UserMessageInput
    expect(normalizeUserMessage(input, 'm1').content).toEqual([{ type: 'text', text: 'x' }])
  })
})

describe('normalizeUserMessage: a detached, frozen snapshot', () => {
  test('the message is deep-frozen; the caller object is neither frozen nor referenced', () => {
    const block = { type: 'text' as const, text: 'original' }
    const source = { kind: 'plugin' as const, plugin: 'acme' }
    const input = { content: [block], source }
    const message = normalizeUserMessage(input, 'm1')
    expect(isDeepFrozen(message)).toBe(true)
    expect(Object.isFrozen(input)).toBe(false)
    expect(Object.isFrozen(input.content)).toBe(false)
    expect(Object.isFrozen(block)).toBe(false)
    expect(Object.isFrozen(source)).toBe(false)
    expect(message.content).not.toBe(input.content)
    expect(message.content[0]).not.toBe(block)
    expect(message.source).not.toBe(source)
  })

  test('mutating the input afterwards changes nothing', () => {
    const input = {
      content: [{ type: 'text' as const, text: 'original' }],
      source: { kind: 'plugin' as const, plugin: 'acme' },
    }
    const message = normalizeUserMessage(input, 'm1')
    input.content[0]!.text = 'mutated'
    input.content.push({ type: 'text', text: 'extra' })
    input.source.plugin = 'other'
    expect(message).toEqual({
      id: 'm1',
      role: 'user',
      content: [{ type: 'text', text: 'original' }],
      source: { kind: 'plugin', plugin: 'acme' },
    })
  })

  test('a string message and its default source are frozen too', () => {
    expect(isDeepFrozen(normalizeUserMessage('x', 'm1'))).toBe(true)
    expect(isDeepFrozen(normalizeUserMessage({ content: [] }, 'm1'))).toBe(true)
  })

  test('each property is read once: a getter cannot show validation one value and storage another', () => {
    let reads = 0
    const block = {
      type: 'text',
      get text() {
        reads++
        return reads === 1 ? 'first' : 42
      },
    }
    const message = normalizeUserMessage({ content: [block] } as unknown as UserMessageInput, 'm1')
    expect(message.content).toEqual([{ type: 'text', text: 'first' }])
    expect(reads).toBe(1)
  })

  test("a throwing getter's error propagates unchanged", () => {
    const failure = new Error('getter broke')
    const input = {
      get content(): never {
        throw failure
      },
    }
    expect(() => normalizeUserMessage(input as unknown as UserMessageInput, 'm1')).toThrow(failure)
  })
})

describe('normalizeUserMessage: every invalid input names its field', () => {
  const bigText = 1n
  const sparse: unknown[] = []
  sparse[1] = { type: 'text', text: 'x' }
  test.each<{ name: string; input: unknown; field: string; value: unknown }>([
    { name: 'a number input', input: 42, field: '', value: 42 },
    { name: 'a null input', input: null, field: '', value: null },
    { name: 'undefined', input: undefined, field: '', value: undefined },
    { name: 'an array input', input: [{ type: 'text', text: 'x' }], field: '', value: undefined },
    {
      name: 'a bigint text',
      input: { content: [{ type: 'text', text: bigText }] },
      field: 'content[0].text',
      value: bigText,
    },
    { name: 'a numeric text', input: { content: [{ type: 'text', text: 1 }] }, field: 'content[0].text', value: 1 },
    { name: 'a missing text', input: { content: [{ type: 'text' }] }, field: 'content[0].text', value: undefined },
    {
      name: 'an unknown block key',
      input: { content: [{ type: 'text', text: 'a', extra: 1 }] },
      field: 'content[0].extra',
      value: 1,
    },
    {
      name: 'a reasoning block',
      input: { content: [{ type: 'reasoning', text: 'r' }] },
      field: 'content[0].type',
      value: 'reasoning',
    },
    {
      name: 'a tool-call block',
      input: { content: [{ type: 'tool-call', id: 'c', name: 'n', arguments: '{}' }] },
      field: 'content[0].type',
      value: 'tool-call',
    },
    {
      name: 'a non-image media type',
      input: {
        content: [
          { type: 'text', text: 'ok' },
          { type: 'image', mediaType: 'text/plain', uri: 'u' },
        ],
      },
      field: 'content[1].mediaType',
      value: 'text/plain',
    },
    {
      name: 'an empty image uri',
      input: { content: [{ type: 'image', mediaType: 'image/png', uri: '' }] },
      field: 'content[0].uri',
      value: '',
    },
    { name: 'a null block', input: { content: [null] }, field: 'content[0]', value: null },
    { name: 'content a string', input: { content: 'hi' }, field: 'content', value: 'hi' },
    { name: 'content missing', input: {}, field: 'content', value: undefined },
    {
      name: 'a model source',
      input: { content: [], source: { kind: 'model', provider: 'p', model: 'm' } },
      field: 'source.kind',
      value: 'model',
    },
    {
      name: 'a tool source',
      input: { content: [], source: { kind: 'tool', callId: 'c1' } },
      field: 'source.kind',
      value: 'tool',
    },
    {
      name: 'a plugin source without plugin',
      input: { content: [], source: { kind: 'plugin' } },
      field: 'source.plugin',
      value: undefined,
    },
    {
      name: 'an empty form',
      input: { content: [], source: { kind: 'plugin', plugin: 'p', form: '' } },
      field: 'source.form',
      value: '',
    },
    {
      name: 'an unknown source key',
      input: { content: [], source: { kind: 'user', name: 'bob' } },
      field: 'source.name',
      value: 'bob',
    },
    { name: 'a null source', input: { content: [], source: null }, field: 'source', value: null },
    { name: 'an unknown input key', input: { content: [], role: 'user' }, field: 'role', value: 'user' },
    { name: 'a quoted unknown input key', input: { content: [], 'my-key': 1 }, field: '["my-key"]', value: 1 },
    { name: 'an undefined source', input: { content: [], source: undefined }, field: 'source', value: undefined },
    {
      name: 'NaN text',
      input: { content: [{ type: 'text', text: Number.NaN }] },
      field: 'content[0].text',
      value: Number.NaN,
    },
    { name: 'a sparse content array', input: { content: sparse }, field: 'content[0]', value: undefined },
  ])('$name → field $field', ({ input, field, value }) => {
    const error = invalid(() => normalizeUserMessage(input as UserMessageInput, 'm1'))
    expect(error.field).toBe(field)
    expect(error.value).toBe(field === '' ? input : value)
    if (field !== '') expect(error.message).toContain(field)
  })

  test('the Date case reports the Date itself as the value and the NOT_JSON error as cause', () => {
    const date = new Date(0)
    const error = invalid(() => normalizeUserMessage({ content: [date] } as unknown as UserMessageInput, 'm1'))
    expect(error.value).toBe(date)
    expect(SessionEventError.is(error.cause)).toBe(true)
    expect((error.cause as SessionEventError).code).toBe('NOT_JSON')
    expect(error.reason).toBe('is not lossless JSON (not a plain object)')
  })

  test('a getter is never run a second time to report the value', () => {
    let reads = 0
    const input = {
      content: [
        {
          type: 'text',
          get text() {
            reads++
            return 1n
          },
        },
      ],
    }
    const error = invalid(() => normalizeUserMessage(input as unknown as UserMessageInput, 'm1'))
    expect(error.field).toBe('content[0].text')
    expect(error.value).toBeUndefined()
    expect(reads).toBe(1)
  })

  test('a cycle is named at the repeated reference', () => {
    const block: Record<string, unknown> = { type: 'text', text: 'x' }
    block['self'] = block
    const error = invalid(() => normalizeUserMessage({ content: [block] } as unknown as UserMessageInput, 'm1'))
    expect(error.field).toBe('content[0].self')
    expect(error.reason).toBe('is not lossless JSON (cycle)')
  })

  test.each([
    ['an empty id', '', ''],
    ['an over-long id', 'x'.repeat(1025), 'x'.repeat(1025)],
  ])('%s is reported at field id', (_name, id, value) => {
    const error = invalid(() => normalizeUserMessage('hi', id))
    expect(error.field).toBe('id')
    expect(error.value).toBe(value)
  })

  test('messages read as sentences', () => {
    expect(invalid(() => normalizeUserMessage(42 as unknown as UserMessageInput, 'm1')).message).toBe(
      'invalid message: must be a string or a { content, source? } object',
    )
    expect(
      invalid(() => normalizeUserMessage({ content: [], role: 'user' } as unknown as UserMessageInput, 'm1')).message,
    ).toBe('invalid message: role is not a message input field (only content and source are)')
    expect(
      invalid(() => normalizeUserMessage({ content: [], source: { kind: 'plugin', plugin: '' } }, 'm1')).message,
    ).toBe('invalid message: source.plugin must be a non-empty string')
  })
})

describe('what normalizeUserMessage accepts, user/message accepts', () => {
  let harness: Harness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  test('each normalized message appends as a user/message unchanged', async () => {
    harness = await createHarness({ clock: fakeClock({ now: 1000 }), ids: fakeIds() })
    const session = harness.sessions.create()
    const inputs: UserMessageInput[] = [
      'plain',
      { content: [] },
      {
        content: [{ type: 'image', mediaType: 'image/jpeg', uri: 'data:image/jpeg;base64,AA==' }],
        source: { kind: 'plugin', plugin: 'p', form: 'f' },
      },
    ]
    inputs.forEach((input, index) => {
      const message = normalizeUserMessage(input, `m${index + 1}`)
      const event = session.append('user/message', message, { surfaceOp: 'append' })
      expect(event.data).toEqual(message)
    })
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['m1', 'm2', 'm3'])
  })
})
