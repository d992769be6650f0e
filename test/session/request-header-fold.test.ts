import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  type Harness,
  type JsonObject,
  type RequestHeader,
  type Session,
  type SessionRegistry,
  StructureError,
} from 'yoke'
import { canonicalHeader, foldRequestHeader, headerEquals } from '../../src/session/index.js'
import { isDeepFrozen, thrownBy } from '../helpers/outcomes.js'
import { type EventPlan, logOf, SE, SS, TE, TS } from './builders.js'
import { append, freshRegistry } from './session-helpers.js'

const H: RequestHeader = { config: { provider: 'mock', model: 'm' } }

let harness: Harness
let sessions: SessionRegistry

beforeEach(async () => {
  ;({ harness, sessions } = await freshRegistry())
})

afterEach(() => harness.close())

function headerEvent(header: RequestHeader, reason: 'initial' | 'resume' | 'change'): EventPlan {
  return { type: 'request/header', data: { header: header as unknown as JsonObject, reason }, options: {} }
}

/** Appends a header that must be refused with HEADER_REASON, checking nothing changed. */
function expectHeaderReason(session: Session, plan: EventPlan): void {
  const length = session.length
  const events = session.events
  const folded = session.requestHeader()
  const error = thrownBy(() => append(session, plan))
  expect(StructureError.is(error), String(error)).toBe(true)
  expect(error).toMatchObject({ code: 'HEADER_REASON', type: 'request/header', seq: length })
  expect(session.length).toBe(length)
  expect(session.events).toBe(events)
  expect(session.requestHeader()).toBe(folded)
}

describe('the header reason rule', () => {
  test('initial once, then resume or change only when it differs', () => {
    const session = sessions.create()
    append(session, TS(1))
    append(session, SS(1, 1))
    expectHeaderReason(session, headerEvent(H, 'resume'))
    expect(session.requestHeader()).toBeUndefined()
    append(session, headerEvent(H, 'initial'))
    expect(session.requestHeader()).toEqual(H)
    expectHeaderReason(session, headerEvent(H, 'initial'))
    expectHeaderReason(session, headerEvent(H, 'change'))
    const changed: RequestHeader = { ...H, system: 'x' }
    append(session, headerEvent(changed, 'change'))
    expect(session.requestHeader()).toEqual(changed)
    append(session, headerEvent(H, 'resume'))
    expect(session.requestHeader()).toEqual(H)
    expect(session.length).toBe(5)
  })

  test('change without an earlier header is HEADER_REASON', () => {
    const session = sessions.create()
    append(session, TS(1))
    expectHeaderReason(session, headerEvent({ ...H, system: 'x' }, 'change'))
  })

  test('a change to an equal header in non-canonical form is HEADER_REASON', () => {
    const session = sessions.create()
    append(session, TS(1))
    append(session, headerEvent(H, 'initial'))
    expectHeaderReason(session, headerEvent({ ...H, system: '', tools: [], adapterDefaults: {} }, 'change'))
  })

  test('the rule spans turns: a later turn resumes or changes', () => {
    const session = sessions.create()
    for (const plan of [TS(1), headerEvent(H, 'initial'), TE(1, 'completed'), TS(2)]) append(session, plan)
    expectHeaderReason(session, headerEvent(H, 'initial'))
    append(session, headerEvent(H, 'resume'))
    append(session, headerEvent({ config: { provider: 'mock', model: 'other' } }, 'change'))
    expect(session.requestHeader()).toEqual({ config: { provider: 'mock', model: 'other' } })
  })

  test('seeds follow the same rule, failing at the index', () => {
    const seed = logOf([TS(1), SS(1, 1), headerEvent(H, 'initial'), headerEvent(H, 'initial')])
    const error = thrownBy(() => sessions.create({ seed }))
    expect(StructureError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'HEADER_REASON', index: 3 })
    const resumed = sessions.create({ seed: logOf([TS(1), headerEvent(H, 'initial'), headerEvent(H, 'resume')]) })
    expect(resumed.requestHeader()).toEqual(H)
  })

  test('a reopened log resumes: initial is refused after the seed', () => {
    const seed = logOf([TS(1), SS(1, 1), headerEvent(H, 'initial'), SE(1, 1), TE(1, 'completed')])
    const session = sessions.create({ seed })
    expect(session.requestHeader()).toEqual(H)
    append(session, TS(2))
    expectHeaderReason(session, headerEvent(H, 'initial'))
    append(session, headerEvent(H, 'resume'))
  })
})

const full: RequestHeader = {
  config: { provider: 'mock', model: 'm', reasoningEffort: 'high', temperature: 0.5, maxTokens: 100, stop: ['a', 'b'] },
  adapterDefaults: { reasoningEffort: true, maxTokens: true },
  system: 'be brief',
  tools: [
    { name: 'echo', description: 'echoes', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
    { name: 'read', description: 'reads', parameters: { type: 'object' } },
  ],
}

describe('canonicalHeader and headerEquals', () => {
  test('canonicalHeader drops empty markers, system and tools', () => {
    const config = { provider: 'mock', model: 'm' }
    const canonical = canonicalHeader({ config, adapterDefaults: {}, system: '', tools: [] })
    expect(canonical).toStrictEqual({ config })
    expect(Object.keys(canonical)).toEqual(['config'])
  })

  test('canonicalHeader leaves a fully populated header unchanged', () => {
    const canonical = canonicalHeader(full)
    expect(canonical).toStrictEqual(full)
    expect(Object.keys(canonical)).toEqual(['config', 'adapterDefaults', 'system', 'tools'])
  })

  test('canonicalHeader keeps adapterDefaults with one marker', () => {
    const header: RequestHeader = {
      config: { provider: 'mock', model: 'm', maxTokens: 5 },
      adapterDefaults: { maxTokens: true },
    }
    expect(canonicalHeader(header)).toStrictEqual(header)
  })

  test('headerEquals is false for each real difference', () => {
    const base: RequestHeader = {
      config: { provider: 'mock', model: 'm', maxTokens: 100 },
      system: 'be brief',
      tools: [
        { name: 'echo', description: 'echoes', parameters: { type: 'object' } },
        { name: 'read', description: 'reads', parameters: { type: 'object' } },
      ],
    }
    const tools = base.tools ?? []
    const [first, second] = [tools[0], tools[1]] as [
      NonNullable<RequestHeader['tools']>[number],
      NonNullable<RequestHeader['tools']>[number],
    ]
    const variants: RequestHeader[] = [
      { ...base, config: { ...base.config, model: 'other' } },
      { ...base, config: { ...base.config, reasoningEffort: 'high' } },
      { ...base, adapterDefaults: { maxTokens: true } },
      { ...base, system: 'be verbose' },
      { ...base, tools: [first, second, { name: 'extra', description: '', parameters: {} }] },
      { ...base, tools: [{ ...first, description: 'repeats' }, second] },
      { ...base, tools: [second, first] },
      { ...base, config: { ...base.config, temperature: 0 } },
      { ...base, config: { ...base.config, maxTokens: 101 } },
      { ...base, config: { ...base.config, stop: ['x'] } },
      { ...base, config: { ...base.config, provider: 'other' } },
    ]
    for (const variant of variants) {
      expect(headerEquals(base, variant), JSON.stringify(variant)).toBe(false)
      expect(headerEquals(variant, base), JSON.stringify(variant)).toBe(false)
    }
  })

  test('[] vs one tool differ', () => {
    const one: RequestHeader = { ...H, tools: [{ name: 'echo', description: 'echoes', parameters: {} }] }
    expect(headerEquals({ ...H, tools: [] }, one)).toBe(false)
    expect(headerEquals(H, one)).toBe(false)
  })

  test('headerEquals is true for a structuredClone, absent vs [] tools and absent vs empty system', () => {
    expect(headerEquals(full, structuredClone(full))).toBe(true)
    expect(headerEquals(H, { ...H, tools: [] })).toBe(true)
    expect(headerEquals({ ...H, tools: [] }, H)).toBe(true)
    expect(headerEquals(H, { ...H, system: '' })).toBe(true)
    expect(headerEquals(H, { ...H, adapterDefaults: {} })).toBe(true)
  })

  test('stop is compared element-wise; tool parameters by canonical JSON', () => {
    const withStop = (stop: string[]): RequestHeader => ({ config: { ...H.config, stop } })
    expect(headerEquals(withStop(['a', 'b']), withStop(['a', 'b']))).toBe(true)
    expect(headerEquals(withStop(['a', 'b']), withStop(['b', 'a']))).toBe(false)
    expect(headerEquals(withStop([]), H)).toBe(false)
    const tool = (parameters: JsonObject): RequestHeader => ({
      ...H,
      tools: [{ name: 'echo', description: '', parameters }],
    })
    expect(headerEquals(tool({ a: 1, b: 2 }), tool({ b: 2, a: 1 }))).toBe(true)
    expect(headerEquals(tool({ a: 1 }), tool({ a: 2 }))).toBe(false)
  })
})

describe('foldRequestHeader and session.requestHeader()', () => {
  test('folds to the canonical form of the last request/header', () => {
    const log = logOf([
      TS(1),
      headerEvent({ ...H, system: '', tools: [] }, 'initial'),
      headerEvent({ ...H, system: 'x' }, 'change'),
      { type: 'request/context', data: { provider: 'mock', model: 'm' }, options: {} },
    ])
    expect(foldRequestHeader(log)).toStrictEqual({ ...H, system: 'x' })
    expect(foldRequestHeader(log.slice(0, 2))).toStrictEqual(H)
  })

  test('without a request/header, returns from (the same object), else undefined', () => {
    const from: RequestHeader = { ...H, system: 'earlier' }
    const log = logOf([TS(1), SS(1, 1)])
    expect(foldRequestHeader(log)).toBeUndefined()
    expect(foldRequestHeader([])).toBeUndefined()
    expect(foldRequestHeader(log, from)).toBe(from)
    const later = logOf([TS(1), headerEvent(H, 'initial')])
    expect(foldRequestHeader(later, from)).toStrictEqual(H)
  })

  test('incremental folding over chunks agrees with one fold', () => {
    const log = logOf([
      TS(1),
      headerEvent(H, 'initial'),
      SS(1, 1),
      headerEvent({ ...H, system: 's' }, 'change'),
      SE(1, 1),
    ])
    let folded: RequestHeader | undefined
    for (let index = 0; index < log.length; index += 2) folded = foldRequestHeader(log.slice(index, index + 2), folded)
    expect(folded).toStrictEqual(foldRequestHeader(log))
  })

  test('session.requestHeader() is the canonical fold, deep-frozen, and changes only with a header', () => {
    const session = sessions.create()
    append(session, TS(1))
    expect(session.requestHeader()).toBeUndefined()
    const raw: RequestHeader = { ...full, adapterDefaults: { maxTokens: true }, tools: [] }
    append(session, headerEvent(raw, 'initial'))
    const header = session.requestHeader()
    expect(header).toStrictEqual(canonicalHeader(raw))
    expect(header).not.toHaveProperty('tools')
    expect(isDeepFrozen(header)).toBe(true)
    append(session, SS(1, 1))
    expect(session.requestHeader()).toBe(header)
    expect(session.requestHeader()).toStrictEqual(foldRequestHeader(session.events))
  })

  test('requestContext() is the data of the last request/context, replaced wholesale', () => {
    const session = sessions.create()
    append(session, TS(1))
    expect(session.requestContext()).toBeUndefined()
    append(session, { type: 'request/context', data: { provider: 'a', model: 'm', contextWindow: 1000 }, options: {} })
    append(session, { type: 'request/context', data: { provider: 'b', model: 'n' }, options: {} })
    expect(session.requestContext()).toStrictEqual({ provider: 'b', model: 'n' })
    expect(session.requestContext()).toBe(session.at(2)?.data)
  })
})
