/**
 * The schedule explorer (issue: "same batch under many completion orders with seeded random
 * delays → identical durable log"): one batch mixing concurrency-safe, exclusive, failing,
 * denied and context-adding calls runs under 60 seeds, each body finishing after a seeded random
 * delay on the fake clock. Every run must produce the same durable log (types, data, envelope,
 * minus `time`), the same contexts and the same outcome, while the live `tools/result` order
 * really varies.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { type SessionEvent, toolResult } from 'yoke'
import { block, schedulerWorld, settle, tool } from './scheduler-helpers.js'

/** mulberry32: a tiny seeded PRNG, so every seed replays the same delays. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let mixed = state
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1)
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61)
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296
  }
}

const batch = [
  block('s1', 'read', '{"path":"a"}'),
  block('s2', 'flaky', '{}'),
  block('s3', 'read', '{"path":"secret"}'),
  block('s4', 'note', '{"text":"ctx-4"}'),
  block('x5', 'write', '{"path":"b"}'),
  block('s6', 'read', '{"path":"c"}'),
  block('s7', 'note', '{"text":"ctx-7"}'),
  block('s8', 'flaky', '{}'),
  block('x9', 'write', '{"path":"d"}'),
  block('s10', 'read', '{"path":"e"}'),
  block('u11', 'nope', '{}'),
]

interface Outcome {
  readonly log: unknown[]
  readonly contexts: unknown[]
  readonly outcome: string
  readonly liveOrder: string
}

function durable(event: SessionEvent): unknown {
  const { time: _time, ...rest } = event
  return rest
}

async function runSeed(seed: number): Promise<Outcome> {
  const world = await schedulerWorld()
  const next = random(seed)
  const delayed = <T>(produce: () => T) =>
    new Promise<T>((resolve, reject) => {
      world.clock.setTimer(
        () => {
          try {
            resolve(produce())
          } catch (error) {
            reject(error)
          }
        },
        1 + Math.floor(next() * 40),
      )
    })
  const safe = { isConcurrencySafe: () => true }
  world.tools.register([
    tool('read', { ...safe, execute: (args) => delayed(() => `contents of ${(args as { path: string }).path}`) }),
    tool('flaky', {
      ...safe,
      execute: () =>
        delayed(() => {
          throw new Error('flaky failed')
        }),
    }),
    tool('note', {
      ...safe,
      execute: (args) =>
        delayed(() => toolResult({ content: 'noted', additionalContexts: [(args as { text: string }).text] })),
    }),
    tool('write', {
      execute: (args) =>
        delayed(() => toolResult({ content: `wrote ${(args as { path: string }).path}`, meta: { bytes: 3 } })),
    }),
  ])
  world.ctx.on('tools/pre-execute', ({ call }) =>
    (call.args as { path?: string }).path === 'secret'
      ? { kind: 'deny', reason: 'secret files are off limits' }
      : undefined,
  )
  let done = false
  const running = world.run(batch).then((report) => {
    done = true
    return report
  })
  while (!done) {
    await settle(1)
    if (!done) await world.clock.advance(1)
  }
  const report = await running
  return {
    log: world.session.events.map(durable),
    contexts: [...world.contexts],
    outcome: report.outcome,
    liveOrder: world.live.results.map((payload) => payload.call.callId).join(','),
  }
}

describe('schedule explorer', () => {
  test('60 seeded completion orders give one identical durable log', async () => {
    const reference = await runSeed(1)
    const orders = new Set<string>([reference.liveOrder])
    for (let seed = 2; seed <= 60; seed++) {
      const outcome = await runSeed(seed)
      expect(outcome.log, `seed ${seed}`).toEqual(reference.log)
      expect(outcome.contexts, `seed ${seed}`).toEqual(reference.contexts)
      expect(outcome.outcome).toBe(reference.outcome)
      orders.add(outcome.liveOrder)
    }
    expect(orders.size).toBeGreaterThan(10)
    const described = reference.log.map((event) => {
      const { type, data } = event as { type: string; data: Record<string, unknown> }
      if (type === 'tool/call') return `tool/call ${String(data['callId'])}`
      if (type === 'tool/result') {
        const callId = (data['message'] as { source: { callId: string } }).source.callId
        const code = (data['error'] as { code?: string } | undefined)?.code
        return `tool/result ${callId}${code === undefined ? '' : ` ${code}`}`
      }
      return type
    })
    expect(described).toEqual([
      'turn/start',
      'step/start',
      'assistant/message',
      'tool/call s1',
      'tool/call s2',
      'tool/call s3',
      'tool/call s4',
      'tool/result s1',
      'tool/result s2 TOOL_FAILED',
      'tool/result s3 TOOL_DENIED',
      'tool/result s4',
      'tool/call x5',
      'tool/result x5',
      'tool/call s6',
      'tool/call s7',
      'tool/call s8',
      'tool/result s6',
      'tool/result s7',
      'tool/result s8 TOOL_FAILED',
      'tool/call x9',
      'tool/result x9',
      'tool/call s10',
      'tool/result s10',
      'tool/call u11',
      'tool/result u11 UNKNOWN_TOOL',
    ])
    expect(reference.contexts).toEqual([
      {
        id: 'm5',
        role: 'user',
        content: [{ type: 'text', text: 'ctx-4' }],
        source: { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
      },
      {
        id: 'm9',
        role: 'user',
        content: [{ type: 'text', text: 'ctx-7' }],
        source: { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
      },
    ])
  }, 60_000)
})
