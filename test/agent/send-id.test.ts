/**
 * `send`, `followup`, `steer` and `inject` take `{ id }`: the message gets that id (so a worker's
 * inbox message keeps its id in the log), and an id a message of the session already carries, or
 * a malformed one, is refused with nothing queued.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import {
  type Agent,
  createHarness,
  DuplicateMessageError,
  type Harness,
  InvalidArgumentError,
  InvalidMessageError,
  type SendOptions,
} from 'yoke'
import { fakeIds, scriptedModel, text } from 'yoke/testing'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

async function agentOf(): Promise<Agent> {
  harness = await createHarness({
    model: scriptedModel(Array.from({ length: 10 }, () => text('ok'))),
    persistence: false,
    ids: fakeIds(),
  })
  return harness.createAgent()
}

function thrown(call: () => unknown): unknown {
  try {
    call()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

describe('a given message id', () => {
  test('the message carries it into the log', async () => {
    const agent = await agentOf()
    expect(agent.followup('hi', { id: 'inbox:1' }).id).toBe('inbox:1')
    await agent.whenIdle()
    const users = agent.session.slice(0).filter((event) => event.type === 'user/message')
    expect(users.map((event) => (event.data as { id: string }).id)).toEqual(['inbox:1'])
    // Without it, the harness id source still names the message.
    expect(agent.inject('more').id).not.toBe('inbox:1')
  })

  test('an id a logged message carries is DuplicateMessageError (logged), nothing queued', async () => {
    const agent = await agentOf()
    agent.followup('hi', { id: 'same' })
    await agent.whenIdle()
    const length = agent.session.length
    const error = thrown(() => agent.followup('again', { id: 'same' }))
    expect(DuplicateMessageError.is(error)).toBe(true)
    expect(error).toMatchObject({ messageId: 'same', logged: true })
    expect((error as Error).message).toContain('"same"')
    expect(agent.session.length).toBe(length)
  })

  test('an id pending in the inbox is DuplicateMessageError, nothing queued', async () => {
    const agent = await agentOf()
    agent.inject('first', { id: 'queued' })
    const error = thrown(() => agent.steer('second', { id: 'queued' }))
    expect(DuplicateMessageError.is(error)).toBe(true)
    expect(error).toMatchObject({ messageId: 'queued', logged: false })
    expect(agent.inbox.nextStep.map((message) => message.id)).toEqual(['queued'])
  })

  test.each([
    ['an empty id', { id: '' }, InvalidMessageError, { field: 'id', value: '' }],
    ['an over-long id', { id: 'x'.repeat(1025) }, InvalidMessageError, { field: 'id' }],
    ['an id that is not a string', { id: 7 }, InvalidArgumentError, { argument: 'options.id', value: 7 }],
    ['an unknown option', { target: 'x' }, InvalidArgumentError, { argument: 'options.target', value: 'x' }],
    ['options that are not an object', 'id', InvalidArgumentError, { argument: 'options', value: 'id' }],
  ] as const)('%s is a typed error naming it, nothing queued', async (_name, options, type, fields) => {
    const agent = await agentOf()
    const error = thrown(() => agent.send('hi', 'next-turn', false, options as unknown as SendOptions))
    expect((type as { is(value: unknown): boolean }).is(error)).toBe(true)
    expect(error).toMatchObject(fields)
    expect(agent.inbox.hasPending).toBe(false)
  })
})
