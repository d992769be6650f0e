/**
 * `parseChatRequest`: the body `useChat` posts becomes the chat id and the new user message; a
 * malformed body is an `INVALID_ARGUMENT` error naming the offending field, answered 400 by a
 * route and leaving the session untouched.
 *
 * @module
 */
import { expect, test } from 'vitest'
import { createHarness, InvalidArgumentError } from 'yoke'
import { scriptedModel, text } from 'yoke/testing'
import { parseChatRequest } from '../../src/ai-sdk/index.js'
import { startChatServer } from './ui-chat.js'
import { useCleanups } from './fixtures.js'

const cleanups = useCleanups()

const user = (parts: unknown[], id = 'u2') => ({ id, role: 'user', parts })

test('the last user message becomes the input: its text, or text and images as blocks', () => {
  const history = [
    user([{ type: 'text', text: 'first' }], 'u1'),
    { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'answer' }] },
  ]
  expect(
    parseChatRequest({
      id: 'chat-1',
      messages: [...history, user([{ type: 'text', text: 'second' }])],
      trigger: 'submit-message',
    }),
  ).toEqual({ id: 'chat-1', input: 'second', trigger: 'submit-message' })
  expect(
    parseChatRequest({
      id: 'chat-1',
      messages: [
        user([
          { type: 'step-start' },
          { type: 'text', text: 'What is this?' },
          { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AAAA', filename: 'a.png' },
          { type: 'data-note', data: { any: 1 } },
        ]),
      ],
      trigger: 'regenerate-message',
      messageId: 'a1',
    }),
  ).toEqual({
    id: 'chat-1',
    input: {
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', mediaType: 'image/png', uri: 'data:image/png;base64,AAAA' },
      ],
    },
    trigger: 'regenerate-message',
    messageId: 'a1',
  })
  // An old client that sends no trigger submits.
  expect(parseChatRequest({ id: 'c', messages: [user([{ type: 'text', text: 'x' }])] }).trigger).toBe('submit-message')
})

test.each([
  ['not an object', 'body', null],
  ['an array', 'body', []],
  ['no id', 'body.id', { messages: [user([{ type: 'text', text: 'x' }])] }],
  ['an empty id', 'body.id', { id: '', messages: [user([{ type: 'text', text: 'x' }])] }],
  ['no messages', 'body.messages', { id: 'c' }],
  ['empty messages', 'body.messages', { id: 'c', messages: [] }],
  ['messages not an array', 'body.messages', { id: 'c', messages: 'hi' }],
  [
    'an unknown trigger',
    'body.trigger',
    { id: 'c', trigger: 'resume-stream', messages: [user([{ type: 'text', text: 'x' }])] },
  ],
  ['a numeric messageId', 'body.messageId', { id: 'c', messageId: 7, messages: [user([{ type: 'text', text: 'x' }])] }],
  ['a last message that is no object', 'body.messages[0]', { id: 'c', messages: ['hi'] }],
  [
    'a last message from the assistant',
    'body.messages[1].role',
    { id: 'c', messages: [user([{ type: 'text', text: 'x' }]), { id: 'a', role: 'assistant', parts: [] }] },
  ],
  ['parts not an array', 'body.messages[0].parts', { id: 'c', messages: [{ id: 'u', role: 'user', parts: 'x' }] }],
  ['a part that is no object', 'body.messages[0].parts[0]', { id: 'c', messages: [user([42])] }],
  [
    'a text that is no string',
    'body.messages[0].parts[1].text',
    {
      id: 'c',
      messages: [
        user([
          { type: 'text', text: 'a' },
          { type: 'text', text: 5 },
        ]),
      ],
    },
  ],
  [
    'a file that is no image',
    'body.messages[0].parts[0].mediaType',
    {
      id: 'c',
      messages: [user([{ type: 'file', mediaType: 'application/pdf', url: 'data:application/pdf;base64,AA' }])],
    },
  ],
  [
    'an image without a url',
    'body.messages[0].parts[0].url',
    { id: 'c', messages: [user([{ type: 'file', mediaType: 'image/png' }])] },
  ],
  ['nothing to say', 'body.messages[0].parts', { id: 'c', messages: [user([{ type: 'step-start' }])] }],
])('a body with %s is INVALID_ARGUMENT naming %s', (_what, argument, body) => {
  let thrown: unknown
  try {
    parseChatRequest(body)
  } catch (error) {
    thrown = error
  }
  expect(InvalidArgumentError.is(thrown)).toBe(true)
  expect(thrown).toMatchObject({ code: 'INVALID_ARGUMENT', argument })
  expect((thrown as Error).message).toContain(argument)
})

test('a route answers a malformed body 400 with the field, and the session is not touched', async () => {
  const model = scriptedModel([text('Hi.')])
  const harness = await createHarness({ model })
  cleanups.push(() => harness.close())
  const server = await startChatServer(harness)
  cleanups.push(() => server.close())
  const response = await fetch(server.api, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'chat-1', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 9 }] }] }),
  })
  expect(response.status).toBe(400)
  expect(await response.json()).toEqual({
    error: {
      code: 'INVALID_ARGUMENT',
      argument: 'body.messages[0].parts[0].text',
      message: 'invalid body.messages[0].parts[0].text: must be a string',
    },
  })
  expect(model.requests).toHaveLength(0)
  expect((await harness.listSessions()).map((session) => session.id)).not.toContain('chat-1')
})
