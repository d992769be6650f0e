import { describe, expect, it } from 'vitest'
import { createSession } from '../../src/session/create-session.js'
import { copyDeltaPayload, copyStreamDelta } from '../../src/session/snapshot/copy-stream-delta.js'
import { shareSnapshot } from '../../src/session/snapshot/shared-snapshots.js'
import { snapshotJson } from '../../src/session/snapshot/snapshot-json.js'
import { isDeepFrozen } from '../helpers/outcomes.js'

const symbolKey = Symbol('tag')

describe('copyStreamDelta: the field-by-field copy of a text or reasoning delta', () => {
  it('copies a delta exactly as the generic snapshot does, deep-frozen', () => {
    for (const delta of [
      { type: 'text-delta', index: 0, text: 'hi' },
      { type: 'reasoning-delta', index: 3, text: '' },
      { type: 'text-delta', index: 1, text: 'quote " backslash \\ lone \ud800 🙂' },
    ]) {
      const copy = copyStreamDelta(delta)
      expect(copy).not.toBe(delta)
      expect(JSON.stringify(copy)).toBe(JSON.stringify(snapshotJson(delta)))
      expect(isDeepFrozen(copy)).toBe(true)
    }
  })

  it('leaves everything else to the generic path (undefined), which names the problem', () => {
    const nonEnumerable = Object.defineProperty({ type: 'text-delta', index: 0 }, 'text', { value: 'x' })
    for (const value of [
      undefined,
      null,
      'text',
      [],
      { index: 0, type: 'text-delta', text: 'x' },
      { type: 'text-delta', index: 0, text: 'x', extra: 1 },
      { type: 'text-delta', index: 0 },
      { type: 'block-start', index: 0, text: 'x' },
      { type: 'text-delta', index: -1, text: 'x' },
      { type: 'text-delta', index: -0, text: 'x' },
      { type: 'text-delta', index: 0.5, text: 'x' },
      { type: 'text-delta', index: Number.NaN, text: 'x' },
      { type: 'text-delta', index: 0, text: 1 },
      { type: 'text-delta', index: 0, text: 'x', [symbolKey]: 1 },
      nonEnumerable,
      Object.assign(Object.create({ inherited: true }), { type: 'text-delta', index: 0, text: 'x' }),
      Object.assign(Object.create(null), { type: 'text-delta', index: 0, text: 'x' }),
    ]) {
      expect(copyStreamDelta(value)).toBeUndefined()
    }
  })

  it('reads each field once (a getter gives one value to the copy)', () => {
    let reads = 0
    const delta = {
      type: 'text-delta',
      index: 0,
      get text() {
        reads++
        return `read ${reads}`
      },
    }
    expect(copyStreamDelta(delta)).toEqual({ type: 'text-delta', index: 0, text: 'read 1' })
    expect(reads).toBe(1)
  })
})

describe('copyDeltaPayload: an assistant/chunk payload around a delta', () => {
  it('copies the payload and its delta, and keeps a shared chunk', () => {
    const chunk = { type: 'text-delta', index: 0, text: 'hi' }
    const copy = copyDeltaPayload({ turn: 1, step: 2, chunk }) as { chunk: object }
    expect(copy).toEqual({ turn: 1, step: 2, chunk })
    expect(copy.chunk).not.toBe(chunk)
    expect(isDeepFrozen(copy)).toBe(true)
    const shared = shareSnapshot(snapshotJson({ type: 'block-start', index: 0, blockType: 'text' })) as object
    expect((copyDeltaPayload({ turn: 1, step: 1, chunk: shared }) as { chunk: object }).chunk).toBe(shared)
  })

  it('leaves other payloads to the generic copy', () => {
    const chunk = { type: 'text-delta', index: 0, text: 'hi' }
    for (const value of [
      { step: 1, turn: 1, chunk },
      { turn: 1, step: 1, chunk, extra: true },
      { turn: Number.POSITIVE_INFINITY, step: 1, chunk },
      { turn: 1, step: -0, chunk },
      { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } },
      { turn: 1, step: 1, chunk: { ...chunk, text: 2n } },
    ]) {
      expect(copyDeltaPayload(value)).toBeUndefined()
    }
  })

  it('gives append the same events and the same errors as before', () => {
    const session = createSession({ id: 's' })
    session.append('turn/start', { turn: 1 })
    session.append('step/start', { turn: 1, step: 1 })
    const chunk = { type: 'text-delta' as const, index: 0, text: 'hi' }
    const event = session.append('assistant/chunk', { turn: 1, step: 1, chunk })
    expect(event.data).toEqual({ turn: 1, step: 1, chunk })
    expect(isDeepFrozen(event)).toBe(true)
    expect(() =>
      session.append('assistant/chunk', { turn: 1, step: 1, chunk: { ...chunk, text: 2n as unknown as string } }),
    ).toThrow(expect.objectContaining({ code: 'NOT_JSON', path: 'data.chunk.text' }))
    expect(() => session.append('assistant/chunk', { turn: 1, step: 1, chunk: { ...chunk, index: -1 } })).toThrow(
      expect.objectContaining({ code: 'INVALID_PAYLOAD' }),
    )
  })
})
