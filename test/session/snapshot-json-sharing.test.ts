import { describe, expect, it } from 'vitest'
import { createSession } from '../../src/session/create-session.js'
import { checkStoredLog } from '../../src/persistence/check-stored-log.js'
import type { StoredLog } from '../../src/persistence/persistence-adapter.js'
import { createSessionCatalog } from '../../src/session/session-catalog.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import { adoptParsedJson, isSharedSnapshot, shareSnapshot } from '../../src/session/snapshot/shared-snapshots.js'
import { isJsonValue, snapshotJson } from '../../src/session/snapshot/snapshot-json.js'
import { isDeepFrozen } from '../helpers/outcomes.js'

describe('snapshotJson with sharing keeps its own earlier results', () => {
  it('returns an earlier result itself, and shares one nested anywhere in a new value', () => {
    const chunk = shareSnapshot(snapshotJson({ type: 'text-delta', index: 0, text: 'hi' }, 'chunk')) as object
    expect(snapshotJson(chunk, 'data', undefined, true)).toBe(chunk)
    const input = { turn: 1, list: [chunk, { inner: chunk }] }
    const copy = snapshotJson(input, 'data', undefined, true) as { turn: number; list: [object, { inner: object }] }
    expect(copy).not.toBe(input)
    expect(copy.list).not.toBe(input.list)
    expect(copy.list[0]).toBe(chunk)
    expect(copy.list[1].inner).toBe(chunk)
    expect(copy).toEqual({
      turn: 1,
      list: [{ type: 'text-delta', index: 0, text: 'hi' }, { inner: { type: 'text-delta', index: 0, text: 'hi' } }],
    })
    expect(isDeepFrozen(copy)).toBe(true)
    expect(isJsonValue(copy)).toBe(true)
    // An unrecorded result is copied again; recorded, it is kept.
    expect((snapshotJson({ again: copy }, 'data', undefined, true) as { again: unknown }).again).not.toBe(copy)
    shareSnapshot(copy as never)
    expect((snapshotJson({ again: copy }, 'data', undefined, true) as { again: unknown }).again).toBe(copy)
  })

  it('still copies a caller value, even a frozen one that looks like a result, and rejects bad data next to a shared one', () => {
    const frozen = Object.freeze({ a: Object.freeze([1, 2]) })
    const copy = snapshotJson(frozen, 'data', undefined, true) as { a: unknown }
    expect(copy).not.toBe(frozen)
    expect(copy.a).not.toBe(frozen.a)
    const shared = shareSnapshot(snapshotJson({ ok: true }, 'data'))
    expect(() => snapshotJson({ shared, bad: 1n }, 'data', undefined, true)).toThrow(
      /data\.bad is not lossless JSON \(bigint\)/,
    )
    expect(() => snapshotJson({ shared, nested: { n: Number.NaN } }, 'data', undefined, true)).toThrow(
      /data\.nested\.n is not lossless JSON/,
    )
  })

  it('without sharing every object is new, earlier results included', () => {
    const chunk = shareSnapshot(snapshotJson({ type: 'finish', reason: 'stop' }, 'chunk')) as object
    expect(snapshotJson(chunk, 'data')).not.toBe(chunk)
    const copy = snapshotJson({ chunk }, 'data') as { chunk: object }
    expect(copy.chunk).not.toBe(chunk)
    expect(copy.chunk).toEqual(chunk)
  })

  it('a sub-object of a result (not a result itself) is copied again', () => {
    const outer = shareSnapshot(snapshotJson({ inner: { x: 1 } }, 'data')) as { inner: object }
    const again = snapshotJson({ inner: outer.inner }, 'data', undefined, true) as { inner: object }
    expect(again.inner).not.toBe(outer.inner)
    expect(again.inner).toEqual({ x: 1 })
  })
})

describe('adoptParsedJson: a marked fresh parse is frozen in place and shared by seeds', () => {
  const parsed = (): unknown[] =>
    JSON.parse(
      '[{"type":"test/note","seq":0,"time":1,"data":{"n":[1,{"__proto__":2}],"s":"x","b":true,"z":null},"ignorable":true}]',
    ) as unknown[]

  it('adopts only a load marked freshly parsed, deep-freezes it and records it once', () => {
    const stored = (events: unknown[], freshlyParsed?: boolean): StoredLog => ({
      header: { version: 1, id: 'a', createdAt: 0 },
      events: events as SessionEvent[],
      revision: 'r',
      ...(freshlyParsed === undefined ? {} : { freshlyParsed }),
    })
    const unmarked = parsed()
    checkStoredLog('a', stored(unmarked), createSessionCatalog(), { full: true })
    expect([Object.isFrozen(unmarked[0]), isSharedSnapshot(unmarked)]).toEqual([false, false])
    const marked = parsed()
    checkStoredLog('a', stored(marked, true), createSessionCatalog(), { full: true })
    expect([isDeepFrozen(marked), isSharedSnapshot(marked)]).toEqual([true, true])
    const list = parsed()
    expect(adoptParsedJson(list)).toBe(true)
    expect([Object.isFrozen(list), isDeepFrozen(list), isSharedSnapshot(list)]).toEqual([true, true, true])
    expect(Object.getPrototypeOf((list[0] as { data: { n: object[] } }).data.n[1])).toBe(Object.prototype)
    expect(adoptParsedJson(list)).toBe(false)
    const seeded = createSession({ id: 'a', seed: list })
    expect(seeded.events[0]?.data).toBe((list[0] as { data: unknown }).data)
  })

  it.each([
    [
      'Infinity',
      (list: unknown[]) => Object.assign((list[0] as { data: object }).data, { x: Number.POSITIVE_INFINITY }),
    ],
    ['-0', (list: unknown[]) => Object.assign((list[0] as { data: object }).data, { x: -0 })],
    ['a Date', (list: unknown[]) => Object.assign((list[0] as { data: object }).data, { x: new Date(0) })],
    ['a function', (list: unknown[]) => Object.assign((list[0] as { data: object }).data, { x: () => 1 })],
    ['undefined', (list: unknown[]) => Object.assign((list[0] as { data: object }).data, { x: undefined })],
    [
      'a cycle',
      (list: unknown[]) => Object.assign((list[0] as { data: object }).data, { x: (list[0] as { data: object }).data }),
    ],
    [
      'a null-prototype object',
      (list: unknown[]) => Object.assign((list[0] as { data: object }).data, { x: Object.create(null) }),
    ],
  ])('leaves a list holding %s unrecorded, so a seed checks it in full', (_label, spoil) => {
    const list = parsed()
    spoil(list)
    expect(adoptParsedJson(list)).toBe(false)
    expect(isSharedSnapshot(list)).toBe(false)
  })
})
