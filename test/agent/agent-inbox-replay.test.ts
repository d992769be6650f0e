/**
 * The inbox as a projection of the log: construction replays
 * every splice after `header.seedLength`, seeds and forks included, with `Array.prototype.splice`
 * coordinates; and a property test against a naive model, live and replayed.
 *
 * @module
 */
import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { DuplicateMessageError, type Session, SessionVetoError, type UserMessage } from 'yoke'
import type { AgentInbox } from '../../src/agent/agent-inbox.js'
import { ids, type InboxHarness, inboxHarness, message, type Note, splice, splicedSeed } from './inbox-helpers.js'

describe('replay at construction', () => {
  let setup: InboxHarness
  let session: Session
  let inbox: AgentInbox

  beforeEach(async () => {
    setup = await inboxHarness()
    session = setup.harness.sessions.create()
    inbox = setup.inboxOf(session)
    inbox.insert(message('t1'), 'next-turn')
    inbox.insert(message('s1'), 'next-step')
    inbox.insert(message('t2'), 'next-turn')
    session.append('turn/start', { turn: 1 })
    inbox.claim({ firstStep: true, turn: 1 })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    inbox.insert(message('t3'), 'next-turn')
    inbox.insert(message('s2'), 'next-step')
    inbox.replace('t3', 'three')
    inbox.remove('t2')
  })

  afterEach(() => setup.harness.close())

  function expectSameLists(replayed: AgentInbox, live: AgentInbox): void {
    expect(replayed.nextTurn).toEqual(live.nextTurn)
    expect(replayed.nextStep).toEqual(live.nextStep)
    expect(replayed.hasPending).toBe(live.hasPending)
  }

  test('a fresh inbox over the same session has the live lists, and emits nothing', () => {
    const notes = setup.notes.length
    const replayed = setup.inboxOf(session)
    expect(ids(replayed.nextTurn)).toEqual(['r1'])
    expect(ids(replayed.nextStep)).toEqual(['s2'])
    expectSameLists(replayed, inbox)
    expect(replayed.has('t1')).toBe(false)
    expect(replayed.has('r1')).toBe(true)
    expect(setup.notes.length).toBe(notes)
  })

  test('a replayed inbox continues with the same coordinates as the live one', () => {
    const replayed = setup.inboxOf(session)
    replayed.insert(message('t4'), 'next-turn')
    expect(session.at(session.length - 1)?.data).toEqual(splice('next-turn', 1, 0, [message('t4')]))
    expect(() => replayed.insert(message('s2'), 'next-turn')).toThrow(DuplicateMessageError)
  })

  test('a session seeded without seedLength (a resume) replays every splice', () => {
    const resumed = setup.harness.sessions.create({ seed: session.events })
    expect(resumed.header.seedLength).toBeUndefined()
    expectSameLists(setup.inboxOf(resumed), inbox)
  })

  test('a fork inherits no pending work: the prefix (header.seedLength) is not replayed', () => {
    const child = setup.harness.sessions.fork(session)
    expect(child.header.seedLength).toBe(session.length)
    const parentLength = session.length
    const childInbox = setup.inboxOf(child)
    expect(childInbox.nextTurn).toEqual([])
    expect(childInbox.nextStep).toEqual([])
    expect(childInbox.hasPending).toBe(false)
    childInbox.insert(message('c1'), 'next-turn')
    childInbox.insert(message('r1', 'the parent id is free here'), 'next-step')
    expect(session.length).toBe(parentLength)
    expect(ids(inbox.nextTurn)).toEqual(['r1'])
    const again = setup.inboxOf(child)
    expect(ids(again.nextTurn)).toEqual(['c1'])
    expect(ids(again.nextStep)).toEqual(['r1'])
    // the child's later life (a seeded reload keeps seedLength) still skips the prefix only
    const reloaded = setup.harness.sessions.create({
      seed: child.events,
      header: { seedLength: child.header.seedLength ?? 0 },
    })
    expectSameLists(setup.inboxOf(reloaded), again)
  })

  test('a seedLength cuts exactly at its seq', () => {
    const [a, b, c] = [message('a'), message('b'), message('c')]
    const seed = [
      splicedSeed(0, splice('next-turn', 0, 0, [a])),
      splicedSeed(1, splice('next-turn', 1, 0, [b])),
      splicedSeed(2, splice('next-step', 0, 0, [c])),
    ]
    const cutAt = (seedLength: number) => setup.inboxOf(setup.harness.sessions.create({ seed, header: { seedLength } }))
    expect(ids(cutAt(0).nextTurn)).toEqual(['a', 'b'])
    expect(ids(cutAt(1).nextTurn)).toEqual(['b'])
    expect(ids(cutAt(2).nextTurn)).toEqual([])
    expect(ids(cutAt(2).nextStep)).toEqual(['c'])
    expect(cutAt(3).hasPending).toBe(false)
  })

  test('a seedLength beyond the log replays nothing', () => {
    const seeded = setup.harness.sessions.create({ seed: session.events, header: { seedLength: 10_000 } })
    expect(setup.inboxOf(seeded).hasPending).toBe(false)
  })
})

describe('replayed coordinates are normalized like Array.prototype.splice', () => {
  let setup: InboxHarness
  beforeAll(async () => {
    setup = await inboxHarness()
  })
  afterAll(() => setup.harness.close())

  test('a start past the end appends; a removedCount past the end removes what is there', () => {
    const [a, b, c] = [message('a'), message('b'), message('c')]
    const seeded = setup.harness.sessions.create({
      seed: [
        splicedSeed(0, splice('next-turn', 7, 0, [a, b])),
        splicedSeed(1, splice('next-turn', 1, 99, [c])),
        splicedSeed(2, splice('next-step', 3, 5, [], 'canceled')),
        splicedSeed(3, splice('next-step', 0, 0, [a])),
      ],
    })
    const inbox = setup.inboxOf(seeded)
    expect(ids(inbox.nextTurn)).toEqual(['a', 'c'])
    expect(ids(inbox.nextStep)).toEqual(['a'])
    // a hand-made log may repeat an id across lists; removing one copy keeps the other pending
    expect(inbox.remove('a')).toBe(true)
    expect(inbox.has('a')).toBe(true)
    expect(inbox.remove('a')).toBe(true)
    expect(inbox.has('a')).toBe(false)
  })

  test('events of other types are skipped', () => {
    const seeded = setup.harness.sessions.create({
      seed: [
        { type: 'turn/start', seq: 0, time: 5, data: { turn: 1 } },
        splicedSeed(1, splice('next-turn', 0, 0, [message('x')])),
        { type: 'user/message', seq: 2, time: 5, data: message('u'), surfaceOp: 'append' },
        { type: 'turn/end', seq: 3, time: 5, data: { turn: 1, reason: { kind: 'completed' } } },
      ],
    })
    expect(ids(setup.inboxOf(seeded).nextTurn)).toEqual(['x'])
  })
})

type Target = 'next-turn' | 'next-step'
type Operation =
  | { readonly kind: 'insert'; readonly id: string; readonly target: Target }
  | { readonly kind: 'remove'; readonly id: string }
  | { readonly kind: 'replace'; readonly id: string }
  | { readonly kind: 'clear' }
  | { readonly kind: 'claim'; readonly firstStep: boolean }
  | { readonly kind: 'fail'; readonly skip: number }

const idArbitrary = fc.constantFrom('p0', 'p1', 'p2', 'p3', 'p4', 'p5')
const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      id: idArbitrary,
      target: fc.constantFrom<Target>('next-turn', 'next-step'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), id: idArbitrary }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('replace' as const), id: idArbitrary }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('claim' as const), firstStep: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), skip: fc.nat(2) }) },
)

interface Entry {
  readonly id: string
  readonly text: string
}

/** The naive inbox: two arrays, spec semantics written out directly. */
class Model {
  readonly lists: Record<Target, Entry[]> = { 'next-turn': [], 'next-step': [] }
  replacements = 0
  turn = 0
  failIn: number | undefined

  /** Whether the next append commits (consuming an armed failure otherwise). */
  append(): boolean {
    if (this.failIn === 0) {
      this.failIn = undefined
      return false
    }
    if (this.failIn !== undefined) this.failIn--
    return true
  }

  find(id: string): { target: Target; index: number } | undefined {
    for (const target of ['next-step', 'next-turn'] as const) {
      const index = this.lists[target].findIndex((entry) => entry.id === id)
      if (index >= 0) return { target, index }
    }
    return undefined
  }

  /** Applies `operation`; returns the expected result ('duplicate' / 'veto' for throws) and notes. */
  apply(operation: Operation, text: string): { result: unknown; notes: Note[] } {
    const notes: Note[] = []
    switch (operation.kind) {
      case 'insert': {
        if (this.find(operation.id) !== undefined) return { result: 'duplicate', notes }
        if (!this.append()) return { result: 'veto', notes }
        this.lists[operation.target].push({ id: operation.id, text })
        return { result: operation.id, notes: [['inserted', operation.id]] }
      }
      case 'remove': {
        const found = this.find(operation.id)
        if (found === undefined) return { result: false, notes }
        if (!this.append()) return { result: 'veto', notes }
        this.lists[found.target].splice(found.index, 1)
        return { result: true, notes: [['discarded', operation.id]] }
      }
      case 'replace': {
        const id = `r${++this.replacements}`
        const found = this.find(operation.id)
        if (found === undefined) return { result: false, notes }
        if (!this.append()) return { result: 'veto', notes }
        this.lists[found.target].splice(found.index, 1, { id, text })
        return {
          result: id,
          notes: [
            ['discarded', operation.id],
            ['inserted', id],
          ],
        }
      }
      case 'clear':
      case 'claim': {
        const turn = ++this.turn
        const taken: Entry[] = []
        let vetoed = false
        const plan: [Target, number][] =
          operation.kind === 'clear'
            ? [
                ['next-step', Number.POSITIVE_INFINITY],
                ['next-turn', Number.POSITIVE_INFINITY],
              ]
            : [
                ['next-step', Number.POSITIVE_INFINITY],
                ...(operation.firstStep ? ([['next-turn', 1]] as [Target, number][]) : []),
              ]
        for (const [target, count] of plan) {
          const list = this.lists[target]
          if (list.length === 0) continue
          if (!this.append()) {
            vetoed = true
            break
          }
          taken.push(...list.splice(0, count))
        }
        for (const entry of taken)
          notes.push(operation.kind === 'clear' ? ['discarded', entry.id] : ['claimed', entry.id, turn])
        return { result: vetoed ? 'veto' : taken.map((entry) => entry.id), notes }
      }
      case 'fail':
        this.failIn = operation.skip
        return { result: undefined, notes }
    }
  }
}

function run(inbox: AgentInbox, operation: Operation, text: string, turn: number, setup: InboxHarness): unknown {
  try {
    switch (operation.kind) {
      case 'insert':
        return inbox.insert(message(operation.id, text), operation.target).id
      case 'remove':
        return inbox.remove(operation.id)
      case 'replace': {
        const replaced = inbox.replace(operation.id, text)
        return replaced === false ? false : replaced.id
      }
      case 'clear':
        return ids(inbox.clear())
      case 'claim':
        return ids(inbox.claim({ firstStep: operation.firstStep, turn }))
      case 'fail':
        setup.arm(operation.skip)
        return undefined
    }
  } catch (error) {
    if (DuplicateMessageError.is(error)) return 'duplicate'
    if (SessionVetoError.is(error) && error.cause === setup.failure) return 'veto'
    throw error
  }
}

function entries(list: readonly UserMessage[]): Entry[] {
  return list.map((entry) => ({ id: entry.id, text: (entry.content[0] as { text: string }).text }))
}

describe('property: random operation sequences', () => {
  let setup: InboxHarness
  beforeAll(async () => {
    setup = await inboxHarness()
  })
  afterAll(() => setup.harness.close())

  test('the lists equal a naive model after every operation; replaying the log reproduces them', () => {
    fc.assert(
      fc.property(fc.array(operationArbitrary, { maxLength: 60 }), (operations) => {
        setup.disarm()
        const session = setup.harness.sessions.create()
        const inbox = setup.inboxOf(session)
        const model = new Model()
        operations.forEach((operation, index) => {
          const text = `${index}`
          setup.notes.length = 0
          const expected = model.apply(operation, text)
          const actual = run(inbox, operation, text, model.turn, setup)
          expect(actual).toEqual(expected.result)
          expect(setup.notes).toEqual(expected.notes)
          expect(entries(inbox.nextTurn)).toEqual(model.lists['next-turn'])
          expect(entries(inbox.nextStep)).toEqual(model.lists['next-step'])
          expect(inbox.hasPending).toBe(model.lists['next-turn'].length + model.lists['next-step'].length > 0)
        })
        setup.disarm()
        // an independent fold of the log with Array.prototype.splice
        const folded: Record<string, UserMessage[]> = { 'next-turn': [], 'next-step': [] }
        for (const event of session.events) {
          const data = event.data as unknown as {
            target: Target
            start: number
            removedCount?: number
            inserted: UserMessage[]
          }
          expect(data.removedCount === undefined && data.inserted.length === 0).toBe(false)
          folded[data.target]?.splice(data.start, data.removedCount ?? 0, ...data.inserted)
        }
        expect(folded['next-turn']).toEqual(inbox.nextTurn)
        expect(folded['next-step']).toEqual(inbox.nextStep)
        for (const replayed of [
          setup.inboxOf(session),
          setup.inboxOf(setup.harness.sessions.create({ seed: session.events })),
        ]) {
          expect(replayed.nextTurn).toEqual(inbox.nextTurn)
          expect(replayed.nextStep).toEqual(inbox.nextStep)
          for (const id of ['p0', 'p1', 'p2', 'p3', 'p4', 'p5']) expect(replayed.has(id)).toBe(inbox.has(id))
        }
      }),
      { numRuns: 150 },
    )
  })
})
