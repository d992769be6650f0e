/** `streamSession`: a session's events from a seq on, stored then live, each seq once. */
import { afterEach, describe, expect, test } from 'vitest'
import {
  type Agent,
  type AgentStreamEvent,
  createHarness,
  ErrorCode,
  type Harness,
  InvalidArgumentError,
  LastEventIdError,
  type SessionStream,
  streamSession,
} from 'yoke'
import { scriptedModel, type ScriptedReply, text } from 'yoke/testing'
import { thrownBy } from '../helpers/outcomes.js'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/** A script entry that waits for `release()` before it answers. */
function held(reply: ScriptedReply): { readonly entry: () => Promise<ScriptedReply>; readonly release: () => void } {
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  return {
    entry: async () => {
      await gate
      return reply
    },
    release,
  }
}

function current(): Harness {
  if (harness === undefined) throw new Error('no harness')
  return harness
}

async function agentWith(script: Parameters<typeof scriptedModel>[0]): Promise<Agent> {
  harness = await createHarness({ model: scriptedModel(script) })
  return harness.createAgent()
}

async function collect(stream: SessionStream, stopAfter?: (event: AgentStreamEvent) => boolean) {
  const events: AgentStreamEvent[] = []
  for await (const event of stream) {
    events.push(event)
    if (stopAfter?.(event) === true) break
  }
  return events
}

describe('streamSession', () => {
  test('yields the stored events, then the live ones, each seq exactly once, in order', async () => {
    const second = held(text('second answer', { chunkSize: 2 }))
    const agent = await agentWith([text('first answer', { chunkSize: 3 }), second.entry])
    await agent.run('one')
    const stored = agent.session.length
    const stream = streamSession(agent)
    const collecting = collect(stream, (event) => event.type === 'turn/end' && event.data.turn === 2)
    const run = agent.run('two')
    second.release()
    await run
    const events = await collecting
    expect(events.map((event) => event.seq)).toEqual(agent.session.events.map((event) => event.seq))
    expect(events).toEqual(agent.session.events)
    expect(events.length).toBeGreaterThan(stored)
    expect(stream.sessionId).toBe(agent.id)
  })

  test('starts after lastEventId, given as header text or as a number', async () => {
    const agent = await agentWith([text('hello there', { chunkSize: 2 })])
    await agent.run('hi')
    const after = agent.session.events.find((event) => event.type === 'assistant/chunk')?.seq ?? -1
    const fromText = await collect(streamSession(agent, { lastEventId: String(after), until: 'turn-end' }))
    const fromNumber = await collect(streamSession(agent, { lastEventId: after, until: 'turn-end' }))
    expect(fromText).toEqual(agent.session.slice(after + 1))
    expect(fromNumber).toEqual(fromText)
  })

  test("until 'turn-end' ends after the first turn/end; at once when lastEventId is a turn/end", async () => {
    const agent = await agentWith([text('a'), text('b')])
    await agent.run('one')
    await agent.run('two')
    const [firstEnd = -1, secondEnd = -1] = agent.session.events
      .filter((event) => event.type === 'turn/end')
      .map((event) => event.seq)
    const first = await collect(streamSession(agent, { from: 0, until: 'turn-end' }))
    expect(first.at(-1)?.seq).toBe(firstEnd)
    expect(await collect(streamSession(agent, { lastEventId: firstEnd, until: 'turn-end' }))).toEqual([])
    expect(await collect(streamSession(agent, { lastEventId: secondEnd, until: 'turn-end' }))).toEqual([])
    const secondTurn = await collect(streamSession(agent, { lastEventId: firstEnd + 1, until: 'turn-end' }))
    expect(secondTurn).toEqual(agent.session.slice(firstEnd + 2, secondEnd + 1))
  })

  test('follows the session until the agent is disposed, then ends after its last events', async () => {
    const held2 = held(text('never'))
    const agent = await agentWith([held2.entry])
    const collecting = collect(streamSession(agent, { from: 0 }))
    agent.followup('go')
    while (agent.status !== 'running') await new Promise((resolve) => setImmediate(resolve))
    await agent.dispose()
    held2.release()
    const events = await collecting
    expect(events).toEqual(agent.session.events)
    expect(events.at(-1)?.type).toBe('turn/end')
  })

  test('a stream opened on a disposed agent yields the stored events and ends', async () => {
    const agent = await agentWith([text('hi')])
    await agent.run('one')
    await agent.dispose()
    expect(await collect(streamSession(agent, { lastEventId: 2 }))).toEqual(agent.session.slice(3))
  })

  test('breaking out stops listening; the stream is iterated once', async () => {
    const agent = await agentWith([text('hi')])
    await agent.run('one')
    const stream = streamSession(agent)
    expect(await collect(stream, () => true)).toHaveLength(1)
    expect(InvalidArgumentError.is(thrownBy(() => stream[Symbol.asyncIterator]()))).toBe(true)
  })
})

describe('streamSession bad input', () => {
  test.each([
    ['abc'],
    [''],
    ['-1'],
    ['1.5'],
    ['01'],
    [' 3'],
    ['3 '],
    ['1e2'],
    ['0x1'],
    ['9007199254740993'],
    [-1],
    [1.5],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
  ])('lastEventId %j is not a seq: LastEventIdError naming it, nothing appended', async (value) => {
    const agent = await agentWith([text('hi')])
    await agent.run('one')
    const length = agent.session.length
    const error = thrownBy(() => streamSession(agent, { lastEventId: value }))
    expect(LastEventIdError.is(error)).toBe(true)
    const refused = error as LastEventIdError
    expect(refused.code).toBe(ErrorCode.INVALID_LAST_EVENT_ID)
    expect(refused).toMatchObject({ value, problem: 'not-a-seq', sessionId: agent.id, lastSeq: length - 1 })
    expect(refused.message).toContain(typeof value === 'string' ? JSON.stringify(value) : String(value))
    expect(agent.session.length).toBe(length)
  })

  test('a lastEventId beyond the log (as a seq of a longer session would be) is refused as beyond-log', async () => {
    const agent = await agentWith([text('hi')])
    await agent.run('one')
    const lastSeq = agent.session.length - 1
    const error = thrownBy(() => streamSession(agent, { lastEventId: String(lastSeq + 1) }))
    expect(error).toMatchObject({
      code: 'INVALID_LAST_EVENT_ID',
      problem: 'beyond-log',
      lastSeq,
      value: `${lastSeq + 1}`,
    })
    expect((error as Error).message).toContain(`last seq ${lastSeq}`)
    // The last seq itself is fine: nothing after it yet.
    expect(() => streamSession(agent, { lastEventId: lastSeq })).not.toThrow()
  })

  test('an empty log refuses seq 0', async () => {
    const agent = await agentWith([])
    expect(thrownBy(() => streamSession(agent, { lastEventId: 0 }))).toMatchObject({
      problem: 'beyond-log',
      lastSeq: -1,
    })
  })

  test.each([
    [{ from: -1 }, 'options.from'],
    [{ from: 1.5 }, 'options.from'],
    [{ from: 99 }, 'options.from'],
    [{ until: 'never' }, 'options.until'],
  ])('option %j is refused naming %s', async (options, argument) => {
    const agent = await agentWith([])
    const error = thrownBy(() => streamSession(agent, options as never))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ argument })
  })

  test('a source that is not an agent, a bare session, or a session without a context is refused', async () => {
    const agent = await agentWith([])
    for (const source of [{}, null, agent.session, { session: agent.session }, { ctx: agent.ctx }]) {
      expect(thrownBy(() => streamSession(source as never))).toMatchObject({
        code: 'INVALID_ARGUMENT',
        argument: 'source',
      })
    }
  })

  test('a live session of the harness, not only an agent, can be streamed', async () => {
    const agent = await agentWith([text('hi')])
    await agent.run('one')
    const events: AgentStreamEvent[] = []
    for await (const event of streamSession(
      { session: agent.session, ctx: current().ctx },
      { from: 1, until: 'turn-end' },
    ))
      events.push(event)
    expect(events).toEqual(agent.session.slice(1))
  })
})
