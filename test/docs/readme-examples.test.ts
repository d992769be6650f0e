import { expect, test } from 'vitest'
import { createHarness, definePlugin, defineService, SessionForkError } from 'yoke'
import { fakeClock, fakeIds } from 'yoke/testing'
import { recordingLogger } from '../helpers/recording-logger.js'

test('the README kernel and session examples run as written', async () => {
  interface Greeter {
    greet(name: string): string
  }
  const GreeterKey = defineService<Greeter>('greeter/service')
  const stopped: string[] = []
  const greeter = definePlugin({
    name: 'greeter',
    provides: [GreeterKey],
    apply(ctx) {
      ctx.provide(GreeterKey, { greet: (name) => `hello, ${name}` })
      return () => {
        stopped.push('greeter')
      }
    },
  })
  {
    await using harness = await createHarness({ plugins: [greeter], clock: fakeClock({ now: 0 }), ids: fakeIds(), logger: recordingLogger() })
    expect(harness.ctx.get(GreeterKey).greet('world')).toBe('hello, world')
    expect(harness.describe().entries.at(-1)?.id).toBe('greeter')

    const sessions = harness.ctx.sessions
    const session = sessions.create()
    session.append(
      'user/message',
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    )
    session.append('turn/start', { turn: 1 })
    expect(session.deriveMessages()).toHaveLength(1)
    const fork = sessions.fork(session, { at: 0 })
    expect(fork.header.parentSession).toBe('s1')
    expect(() => sessions.fork(session, { at: 1 })).toThrow(SessionForkError)
  }
  expect(stopped).toEqual(['greeter'])
})

test('the README agents example runs as written', async () => {
  const { scriptedModel, text } = await import('yoke/testing')
  await using harness = await createHarness({ model: scriptedModel([text('Hello!')]), instructions: 'You are helpful.', clock: fakeClock({ now: 0 }), ids: fakeIds() })
  const agent = await harness.createAgent()
  const result = await agent.run('hi')
  expect(result.reason).toEqual({ kind: 'completed' })
  expect(result.text).toBe('Hello!')
  const types = agent.session.events.map((event) => event.type)
  expect(types[types.indexOf('turn/start')]).toBe('turn/start')
  expect(types).toContain('assistant/chunk')
  expect(types).toContain('assistant/message')
  expect(types.at(-1)).toBe('turn/end')
})
