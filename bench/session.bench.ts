/**
 * Session benchmarks (issue targets): append of a typical step's 10 events
 * against a `structuredClone` + push floor, and `deriveMessages()` cost at 1,000 vs 100,000 events.
 */
import { createSession, type Session } from 'yoke'
import { fakeClock } from 'yoke/testing'
import { measure, report } from './measure.js'

interface Planned {
  readonly type: string
  readonly data: unknown
  readonly options?: { readonly surfaceOp?: 'append'; readonly sourceEventSeqs?: readonly number[] }
}

/** One turn of one step: 10 events, as the agent loop writes them. */
function turnEvents(turn: number, base: number): Planned[] {
  const callId = `call-${turn}`
  const events: Planned[] = [
    { type: 'turn/start', data: { turn } },
    { type: 'step/start', data: { turn, step: 1 } },
    { type: 'assistant/chunk', data: { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Let me look ' } } },
    { type: 'assistant/chunk', data: { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'that up.' } } },
    {
      type: 'assistant/message',
      data: {
        turn,
        step: 1,
        message: {
          id: `a-${turn}`,
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look that up.' },
            { type: 'tool-call', id: callId, name: 'search', arguments: '{"query":"weather in Paris"}' },
          ],
          source: { kind: 'model', provider: 'mock', model: 'mock' },
        },
        usage: { inputTokens: 120, outputTokens: 24 },
      },
      options: { surfaceOp: 'append', sourceEventSeqs: [base + 2, base + 3] },
    },
    { type: 'tool/call', data: { turn, step: 1, callId, name: 'search', arguments: '{"query":"weather in Paris"}' } },
    {
      type: 'tool/result',
      data: {
        turn,
        step: 1,
        message: {
          id: `r-${turn}`,
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: 'Sunny, 21°C' }] }],
          source: { kind: 'tool', callId },
        },
      },
      options: { surfaceOp: 'append', sourceEventSeqs: [base + 5] },
    },
    { type: 'step/end', data: { turn, step: 1 } },
    {
      type: 'user/message',
      data: {
        id: `u-${turn}`,
        role: 'user',
        content: [{ type: 'text', text: 'and tomorrow?' }],
        source: { kind: 'user' },
      },
      options: { surfaceOp: 'append' },
    },
    { type: 'turn/end', data: { turn, reason: { kind: 'completed' } } },
  ]
  return events
}

function appendTurn(session: Session, turn: number): void {
  for (const event of turnEvents(turn, session.length)) session.append(event.type, event.data as never, event.options)
}

function sessionWith(events: number): { session: Session; nextTurn: number } {
  const session = createSession({ id: 'bench', clock: fakeClock({ now: 0 }) })
  let turn = 1
  while (session.length < events) appendTurn(session, turn++)
  return { session, nextTurn: turn }
}

/** Runs every session case and returns the ratios by case name. */
export async function runSessionBench(): Promise<Record<string, number>> {
  const ratios: Record<string, number> = {}
  const prepared = turnEvents(1, 0)

  // Append of a step's 10 events (fresh turns on a long-lived session) vs clone + push.
  const small = sessionWith(1_000)
  const appendCase = await measure(
    'append 10 events (one tool step)',
    () => appendTurn(small.session, small.nextTurn++),
    {
      batch: 200,
    },
  )
  const sink: unknown[] = []
  const appendFloor = await measure(
    'structuredClone + push of the same 10 events',
    () => {
      for (const event of prepared)
        sink.push({ type: event.type, seq: sink.length, time: 0, data: structuredClone(event.data) })
      if (sink.length > 1_000_000) sink.length = 0
    },
    { batch: 200 },
  )
  ratios['append-10'] = report(appendCase, appendFloor).ratio

  // Per-step cost does not grow with the session: the same case on a 100,000-event session.
  const large = sessionWith(100_000)
  const appendLarge = await measure(
    'append 10 events at 100,000 events',
    () => appendTurn(large.session, large.nextTurn++),
    {
      batch: 200,
    },
  )
  ratios['append-10@100k/1k'] = report(appendLarge, appendCase).ratio

  // deriveMessages() after a step: the same work at 1,000 and at 100,000 events. Each sample
  // uses a session of exactly that size, so the small case does not grow while it is measured.
  const deriveAt = (size: number, samples: number): { name: string; opsPerSecond: number } => {
    const pool = size <= 10_000 ? Array.from({ length: samples }, () => sessionWith(size)) : [sessionWith(size)]
    let best = 0
    for (let round = 0; round < 5; round++) {
      const started = performance.now()
      for (let index = 0; index < samples; index++) {
        const entry = pool[index % pool.length] as { session: Session; nextTurn: number }
        appendTurn(entry.session, entry.nextTurn++)
        entry.session.deriveMessages()
      }
      best = Math.max(best, (samples / (performance.now() - started)) * 1_000)
      if (pool.length > 1) for (let index = 0; index < pool.length; index++) pool[index] = sessionWith(size)
    }
    return { name: `append 10 + deriveMessages() at ${size.toLocaleString('en-US')} events`, opsPerSecond: best }
  }
  // deriveMessages() after N appends, per new event: the fold projects each event once, so the
  // cost per event is flat from 1,000 to 100,000 events (issue target: ratio ≤ 1.2).
  const perEvent = (size: number, rounds: number): { name: string; opsPerSecond: number } => {
    let best = 0
    for (let round = 0; round < rounds; round++) {
      const started = performance.now()
      const { session } = sessionWith(size)
      session.deriveMessages()
      best = Math.max(best, (session.length / (performance.now() - started)) * 1_000)
    }
    return { name: `N appends + deriveMessages(), per event, N = ${size.toLocaleString('en-US')}`, opsPerSecond: best }
  }
  const perEventSmall = perEvent(1_000, 50)
  const perEventLarge = perEvent(100_000, 3)
  ratios['derive-per-event@100k/1k'] = report(perEventLarge, perEventSmall).ratio

  // Reported for transparency: one step + deriveMessages() on a long session. The fold is
  // incremental, but the frozen array the API promises is a fresh O(messages) pointer copy.
  const deriveSmall = deriveAt(1_000, 200)
  const deriveLarge = deriveAt(100_000, 200)
  ratios['step+derive@100k/1k'] = report(deriveLarge, deriveSmall).ratio

  // session.events does not copy when nothing changed.
  const eventsAccess = await measure(
    'session.events (unchanged) at 100,000 events',
    () => large.session.events.length,
    {
      batch: 10_000,
    },
  )
  const lengthAccess = await measure('session.length at 100,000 events', () => large.session.length, { batch: 10_000 })
  ratios['events-access'] = report(eventsAccess, lengthAccess).ratio
  return ratios
}
