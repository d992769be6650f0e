import { describe, expect, it } from 'vitest'
import { deltaEventTextLength } from '../../src/persistence/delta-event-text-length.js'
import type { SessionEvent } from '../../src/session/session-event.js'

const delta = (text: string, overrides: Record<string, unknown> = {}): SessionEvent =>
  ({
    type: 'assistant/chunk',
    seq: 12,
    time: 1_700_000_000_123,
    data: { turn: 3, step: 1, chunk: { type: 'text-delta', index: 0, text } },
    ...overrides,
  }) as unknown as SessionEvent

describe('deltaEventTextLength: the JSON length of a delta event, without its text', () => {
  it('equals JSON.stringify(event).length for deltas of any text', () => {
    for (const text of ['', 'plain', ' “quoted” ', 'a"b\\c\n\t\u0001', 'lone \ud800 pair 🙂', 'x'.repeat(5_000)]) {
      const event = delta(text)
      expect(deltaEventTextLength(event)).toBe(JSON.stringify(event).length)
    }
    const reasoning = {
      type: 'assistant/chunk',
      seq: 0,
      time: -5,
      data: { turn: 1, step: 2, chunk: { type: 'reasoning-delta', index: 7, text: 'why' } },
    } as unknown as SessionEvent
    expect(deltaEventTextLength(reasoning)).toBe(JSON.stringify(reasoning).length)
  })

  it('is undefined for every other event (measured by its text)', () => {
    const others = [
      { type: 'step/start', seq: 0, time: 0, data: { turn: 1, step: 1 } },
      delta('x', { ignorable: true }),
      delta('x', { data: { step: 1, turn: 3, chunk: { type: 'text-delta', index: 0, text: 'x' } } }),
      delta('x', { data: { turn: 3, step: 1, chunk: { index: 0, type: 'text-delta', text: 'x' } } }),
      delta('x', { data: { turn: 3, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } } }),
      delta('x', { data: { turn: 3, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x', extra: 1 } } }),
      delta('x', { seq: 1.5 }),
      delta('x', { time: Number.NaN }),
      delta('x', { data: null }),
    ]
    for (const event of others) expect(deltaEventTextLength(event as SessionEvent)).toBeUndefined()
  })
})
