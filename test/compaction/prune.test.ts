import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  defineTool,
  type Harness,
  InvalidOptionsError,
  pruneToolResults,
  type SessionEvent,
  StructureError,
} from 'yoke'
import { call, text } from 'yoke/testing'
import { setup } from './compaction-helpers.js'

let harness: Harness | undefined

afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const outputs: Record<string, string> = {
  r1: 'a'.repeat(9000),
  r2: 'b'.repeat(100),
  r3: 'c'.repeat(8192),
  emoji: `ab😀c${'x'.repeat(9000)}`,
}

const dump = defineTool({
  name: 'dump',
  description: 'dumps',
  input: z.object({ which: z.string() }),
  execute: (args) => outputs[args.which] ?? '',
})

/** A turn whose steps call `dump` for each name, and whose last step pauses in a tool so the turn stays open. */
async function openTurnWith(names: readonly string[]) {
  let release = (): void => undefined
  const paused = new Promise<void>((resolve) => (release = resolve))
  let reached = (): void => undefined
  const atPause = new Promise<void>((resolve) => (reached = resolve))
  const pause = defineTool({
    name: 'pause',
    description: 'waits',
    input: z.object({}),
    execute: async () => {
      reached()
      await paused
      return 'resumed'
    },
  })
  const script = [
    ...names.map((name, index) => call(`k${index + 1}`, 'dump', JSON.stringify({ which: name }))),
    call('kp', 'pause', '{}'),
    text('done'),
  ]
  const made = await setup({
    script,
    compaction: { auto: false },
    tools: [dump, pause],
    model: { info: { contextWindow: 1_000_000 } },
  })
  harness = made.harness
  const agent = await harness.createAgent()
  const run = agent.run('go')
  await atPause
  const finish = async () => {
    release()
    return await run
  }
  return { agent, finish }
}

function results(events: readonly SessionEvent[]): SessionEvent[] {
  return events.filter((event) => event.type === 'tool/result' && event.surfaceOp === 'append')
}

describe('pruneToolResults', () => {
  test('rewrites only results above minChars, once; a seeded copy derives the same messages', async () => {
    const { agent, finish } = await openTurnWith(['r1', 'r2', 'r3'])
    const session = agent.session
    const [r1] = results(session.events)
    const before = session.length
    const action = pruneToolResults(session, { trigger: 'pressure' })
    const appended = session.slice(before)
    expect(appended.map((event) => event.type)).toEqual(['compaction/prune', 'tool/result'])
    expect(appended[0]?.data).toEqual({ trigger: 'pressure', targetSeq: r1?.seq, originalChars: 9000, keptChars: 0 })
    const original = r1?.data as { message: { content: [{ content: unknown }] } }
    expect(appended[1]?.data).toEqual({
      ...original,
      message: {
        ...original.message,
        content: [
          {
            ...original.message.content[0],
            content: [
              {
                type: 'text',
                text: '[Tool output removed to save context: 9000 characters. Run the tool again if you need it.]',
              },
            ],
          },
        ],
      },
    })
    expect(action).toEqual({
      kind: 'prune',
      prunedSeqs: [r1?.seq],
      replacementSeqs: [appended[1]?.seq],
      savedTokens: 4 + 2250 - (4 + Math.ceil(89 / 4)),
    })
    expect(pruneToolResults(session, { trigger: 'pressure' })).toEqual({
      kind: 'prune',
      prunedSeqs: [],
      replacementSeqs: [],
      savedTokens: 0,
    })
    expect(session.length).toBe(before + 2)
    expect(harness?.sessions.create({ seed: session.events }).deriveMessages()).toEqual(session.deriveMessages())
    await finish()
  })

  test('keepHeadChars counts code points and never splits a surrogate pair', async () => {
    const { agent, finish } = await openTurnWith(['emoji'])
    pruneToolResults(agent.session, { trigger: 'context-overflow', keepHeadChars: 4 })
    const prune = agent.session.events.find((event) => event.type === 'compaction/prune')
    expect(prune?.data).toMatchObject({ trigger: 'context-overflow', originalChars: 9004, keptChars: 4 })
    const replacement = agent.session.at((prune?.seq as number) + 1) as SessionEvent
    const inner = (replacement.data as { message: { content: [{ content: [{ text: string }] }] } }).message.content[0]
      .content
    expect(inner).toHaveLength(1)
    expect(inner[0].text).toBe(
      'ab😀c\n[Tool output removed to save context: 9004 characters. Run the tool again if you need it.]',
    )
    await finish()
  })

  test('bounds out of range throw InvalidOptionsError before anything is appended', async () => {
    const { agent, finish } = await openTurnWith(['r1'])
    const before = agent.session.length
    const cases: [Parameters<typeof pruneToolResults>[1], string][] = [
      [{ trigger: 'pressure', keepHeadChars: 8000 }, 'keepHeadChars'],
      [{ trigger: 'pressure', keepHeadChars: -1 }, 'keepHeadChars'],
      [{ trigger: 'pressure', minChars: 0 }, 'minChars'],
      [{ trigger: 'pressure', minChars: 1.5 }, 'minChars'],
    ]
    for (const [options, field] of cases) {
      let caught: unknown
      try {
        pruneToolResults(agent.session, options)
      } catch (error) {
        caught = error
      }
      expect(InvalidOptionsError.is(caught), field).toBe(true)
      expect(caught).toMatchObject({ code: 'INVALID_OPTIONS', field })
    }
    expect(agent.session.length).toBe(before)
    await finish()
  })

  test('outside an open turn the first append throws NO_OPEN_TURN and nothing is appended', async () => {
    const { agent, finish } = await openTurnWith(['r1'])
    await finish()
    const before = agent.session.length
    let caught: unknown
    try {
      pruneToolResults(agent.session, { trigger: 'pressure' })
    } catch (error) {
      caught = error
    }
    expect(StructureError.is(caught)).toBe(true)
    expect(caught).toMatchObject({ code: 'NO_OPEN_TURN' })
    expect(agent.session.length).toBe(before)
  })
})
