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
