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
    await using harness = await createHarness({
      plugins: [greeter],
      clock: fakeClock({ now: 0 }),
      ids: fakeIds(),
      logger: recordingLogger(),
    })
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

test('the README agents, resume and fork examples run as written', async () => {
  const { scriptedModel, text } = await import('yoke/testing')
  const { mkdtemp, rm } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = await mkdtemp(join(tmpdir(), 'yoke-readme-'))
  try {
    const model = scriptedModel([text('Hello!'), text('Again!'), text('Here.'), text('Branch.')])
    const ids = fakeIds()
    {
      await using harness = await createHarness({
        model,
        persistence: { dir },
        instructions: 'You are helpful.',
        clock: fakeClock({ now: 0 }),
        ids,
      })
      const agent = await harness.createAgent({ sessionId: 'demo' })
      const result = await agent.run('hi')
      expect(result).toMatchObject({
        turn: 1,
        reason: { kind: 'completed' },
        text: 'Hello!',
        usage: { inputTokens: 0, outputTokens: 0 },
      })
      const streamed: string[] = []
      for await (const event of agent.stream('and again?')) streamed.push(event.type)
      expect(streamed[0]).toBe('turn/start')
      expect(streamed).toContain('assistant/chunk')
      expect(streamed.at(-1)).toBe('turn/end')
    }
    await using harness = await createHarness({ model, persistence: { dir }, clock: fakeClock({ now: 0 }), ids })
    const agent = await harness.resumeAgent('demo')
    expect((await agent.run('where were we?')).turn).toBe(3)
    const turnEndSeq = agent.session.events.find((event) => event.type === 'turn/end')?.seq ?? -1
    const child = await harness.fork('demo', { at: turnEndSeq, id: 'demo-alt' })
    expect(child.header).toMatchObject({ parentSession: 'demo', seedLength: turnEndSeq + 1 })
    const branch = await harness.resumeAgent(child.id)
    expect(await branch.run('other way')).toMatchObject({ turn: 2, text: 'Branch.' })
    expect((await harness.listSessions()).map((summary) => summary.id).sort()).toEqual(['demo', 'demo-alt'])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
