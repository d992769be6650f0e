/**
 * The agent inbox: every row of the operation table with its exact durable
 * splices and live notifications, the append-before-change rule, failing appends, duplicate ids
 * and the frozen views.
 *
 * @module
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  DuplicateMessageError,
  InvalidArgumentError,
  InvalidMessageError,
  type Session,
  SessionEventError,
  SessionVetoError,
  type UserMessage,
} from 'yoke'
import { AgentInbox } from '../../src/agent/agent-inbox.js'
import { ids, type InboxHarness, inboxHarness, message, splice, splices } from './inbox-helpers.js'

let setup: InboxHarness
let session: Session
let inbox: AgentInbox

beforeEach(async () => {
  setup = await inboxHarness()
  session = setup.harness.sessions.create()
  inbox = setup.inboxOf(session)
})

afterEach(() => setup.harness.close())

/** Runs `action`, expects the armed guard's veto, returns nothing. */
function expectVeto(action: () => unknown): void {
  let thrown: unknown
  try {
    action()
  } catch (error) {
    thrown = error
  }
  expect(SessionVetoError.is(thrown), String(thrown)).toBe(true)
  expect((thrown as SessionVetoError).code).toBe('APPEND_VETOED')
  expect((thrown as SessionVetoError).cause).toBe(setup.failure)
}

describe('send: an insertion splice at the end of the target list', () => {
  test('the first insertion logs exactly one splice and notifies inserted', () => {
    const a = message('a')
    const queued = inbox.insert(a, 'next-turn')
    expect(session.events).toEqual([
      { type: 'agent/inbox/spliced', seq: 0, time: 1000, data: splice('next-turn', 0, 0, [a]) },
    ])
    expect(setup.notes).toEqual([['inserted', 'a']])
    expect(queued).toEqual(a)
    expect(inbox.nextTurn).toEqual([a])
    expect(inbox.nextStep).toEqual([])
    expect(inbox.hasPending).toBe(true)
    expect(inbox.has('a')).toBe(true)
  })

  test('the queued message is the committed frozen copy, shared by the list and the notification', () => {
    let notified: UserMessage | undefined
    setup.harness.on('agent/inbox/inserted', ({ message: inserted }) => {
      notified = inserted
    })
    const a = message('a')
    const queued = inbox.insert(a, 'next-step')
    const committed = (session.at(0)?.data as unknown as { inserted: UserMessage[] } | undefined)?.inserted[0]
    expect(queued).toBe(committed)
    expect(inbox.nextStep[0]).toBe(queued)
    expect(notified).toBe(queued)
    expect(Object.isFrozen(queued)).toBe(true)
    expect(Object.isFrozen(queued.content[0])).toBe(true)
  })

  test('later insertions append at the end of their own list', () => {
    const [a, b, c, d] = [message('a'), message('b'), message('c'), message('d')]
    inbox.insert(a, 'next-turn')
    inbox.insert(b, 'next-step')
    inbox.insert(c, 'next-turn')
    inbox.insert(d, 'next-step')
    expect(splices(session)).toEqual([
      splice('next-turn', 0, 0, [a]),
      splice('next-step', 0, 0, [b]),
      splice('next-turn', 1, 0, [c]),
      splice('next-step', 1, 0, [d]),
    ])
    expect(ids(inbox.nextTurn)).toEqual(['a', 'c'])
    expect(ids(inbox.nextStep)).toEqual(['b', 'd'])
    expect(setup.notes).toEqual([
      ['inserted', 'a'],
      ['inserted', 'b'],
      ['inserted', 'c'],
      ['inserted', 'd'],
    ])
  })

  test('an inject while idle is exactly one next-step splice', () => {
    inbox.insert(message('ctx'), 'next-step')
    expect(session.events.map((event) => [event.type, (event.data as { target: string }).target])).toEqual([
      ['agent/inbox/spliced', 'next-step'],
    ])
  })

  test('an unknown target throws InvalidArgumentError and logs nothing', () => {
    expect(() => inbox.insert(message('a'), 'later' as 'next-turn')).toThrow(InvalidArgumentError)
    expect(session.length).toBe(0)
    expect(setup.notes).toEqual([])
  })

  test('an invalid message is refused by the session and changes nothing', () => {
    const bad = {
      id: 'x',
      role: 'user',
      content: [{ type: 'reasoning', text: 'r' }],
      source: { kind: 'user' },
    } as unknown as UserMessage
    expect(() => inbox.insert(bad, 'next-turn')).toThrow(SessionEventError)
    expect(session.length).toBe(0)
    expect(inbox.hasPending).toBe(false)
    expect(inbox.has('x')).toBe(false)
  })
})

describe('remove: a canceled deletion splice', () => {
  test('removes the message where it stands and notifies discarded', () => {
    const [a, b, c] = [message('a'), message('b'), message('c')]
    inbox.insert(a, 'next-turn')
    inbox.insert(b, 'next-turn')
    inbox.insert(c, 'next-turn')
    expect(inbox.remove('b')).toBe(true)
    expect(splices(session).at(-1)).toEqual(splice('next-turn', 1, 1, [], 'canceled'))
    expect(ids(inbox.nextTurn)).toEqual(['a', 'c'])
    expect(setup.notes.at(-1)).toEqual(['discarded', 'b'])
    expect(inbox.has('b')).toBe(false)
  })

  test('finds the message in next-step too', () => {
    inbox.insert(message('t'), 'next-turn')
    inbox.insert(message('s'), 'next-step')
    expect(inbox.remove('s')).toBe(true)
    expect(splices(session).at(-1)).toEqual(splice('next-step', 0, 1, [], 'canceled'))
    expect(inbox.hasPending).toBe(true)
    expect(inbox.remove('t')).toBe(true)
    expect(inbox.hasPending).toBe(false)
  })

  test('an id that is not pending returns false, logs and notifies nothing', () => {
    inbox.insert(message('a'), 'next-turn')
    const before = session.length
    expect(inbox.remove('zzz')).toBe(false)
    expect(inbox.remove('a')).toBe(true)
    expect(inbox.remove('a')).toBe(false)
    expect(session.length).toBe(before + 1)
    expect(setup.notes).toEqual([
      ['inserted', 'a'],
      ['discarded', 'a'],
    ])
  })

  test('inserted [X, P], discarded [X] with a canceled splice, claimed [{P, turn 1}] after turn/start', () => {
    const x = message('X')
    const p = message('P')
    inbox.insert(x, 'next-step')
    inbox.remove('X')
    inbox.insert(p, 'next-turn')
    session.append('turn/start', { turn: 1 })
    const claimed = inbox.claim({ firstStep: true, turn: 1 })
    expect(ids(claimed)).toEqual(['P'])
    expect(setup.notes).toEqual([
      ['inserted', 'X'],
      ['discarded', 'X'],
      ['inserted', 'P'],
      ['claimed', 'P', 1],
    ])
    expect(splices(session)[1]).toEqual(splice('next-step', 0, 1, [], 'canceled'))
    expect(setup.timeline.slice(-3)).toEqual(['event:turn/start', 'event:agent/inbox/spliced', 'claimed:P'])
  })
})

describe('replace: one canceled splice removing 1 and inserting 1', () => {
  test('replaces in place with a fresh id; discarded(old) then inserted(new)', () => {
    const [a, b, c] = [message('a'), message('b'), message('c')]
    inbox.insert(a, 'next-step')
    inbox.insert(b, 'next-step')
    inbox.insert(c, 'next-step')
    const replaced = inbox.replace('b', 'better')
    const expected = { id: 'r1', role: 'user', content: [{ type: 'text', text: 'better' }], source: { kind: 'user' } }
    expect(replaced).toEqual(expected)
    expect(splices(session).at(-1)).toEqual(splice('next-step', 1, 1, [expected as UserMessage], 'canceled'))
    expect(ids(inbox.nextStep)).toEqual(['a', 'r1', 'c'])
    expect(inbox.nextStep[1]).toBe(replaced)
    expect(setup.notes.slice(-2)).toEqual([
      ['discarded', 'b'],
      ['inserted', 'r1'],
    ])
    expect(inbox.has('b')).toBe(false)
    expect(inbox.has('r1')).toBe(true)
  })

  test('keeps the list: a next-turn message stays in next-turn, with a plugin source', () => {
    inbox.insert(message('a'), 'next-turn')
    const replaced = inbox.replace('a', {
      content: [{ type: 'text', text: 'n' }],
      source: { kind: 'plugin', plugin: 'acme' },
    })
    expect(replaced !== false && replaced.source).toEqual({ kind: 'plugin', plugin: 'acme' })
    expect(ids(inbox.nextTurn)).toEqual(['r1'])
    expect(inbox.nextStep).toEqual([])
  })

  test('an id that is not pending returns false; nothing logged or notified', () => {
    inbox.insert(message('a'), 'next-turn')
    expect(inbox.replace('nope', 'x')).toBe(false)
    expect(session.length).toBe(1)
    expect(setup.notes).toEqual([['inserted', 'a']])
  })

  test('bad input throws InvalidMessageError and changes nothing, pending or not', () => {
    inbox.insert(message('a'), 'next-turn')
    const bad = { content: [{ type: 'text', text: 5 }] } as unknown as string
    for (const id of ['a', 'nope']) {
      let thrown: unknown
      try {
        inbox.replace(id, bad)
      } catch (error) {
        thrown = error
      }
      expect(InvalidMessageError.is(thrown)).toBe(true)
      expect((thrown as InvalidMessageError).field).toBe('content[0].text')
    }
    expect(session.length).toBe(1)
    expect(ids(inbox.nextTurn)).toEqual(['a'])
  })

  test('a replacement id that is already pending throws DuplicateMessageError; nothing changes', () => {
    const clashing = setup.inboxOf(session, () => 'b')
    clashing.insert(message('a'), 'next-turn')
    clashing.insert(message('b'), 'next-step')
    const views = [clashing.nextTurn, clashing.nextStep]
    let thrown: unknown
    try {
      clashing.replace('a', 'x')
    } catch (error) {
      thrown = error
    }
    expect(DuplicateMessageError.is(thrown)).toBe(true)
    expect((thrown as DuplicateMessageError).messageId).toBe('b')
    expect([clashing.nextTurn, clashing.nextStep]).toEqual(views)
    expect(clashing.nextTurn).toBe(views[0])
    expect(session.length).toBe(2)
  })
})

describe('clear: next-step first, then next-turn, as canceled deletions', () => {
  test('one canceled splice per non-empty list, then discarded per message in that order', () => {
    inbox.insert(message('t1'), 'next-turn')
    inbox.insert(message('s1'), 'next-step')
    inbox.insert(message('t2'), 'next-turn')
    inbox.insert(message('s2'), 'next-step')
    setup.timeline.length = 0
    const discarded = inbox.clear()
    expect(ids(discarded)).toEqual(['s1', 's2', 't1', 't2'])
    expect(Object.isFrozen(discarded)).toBe(true)
    expect(splices(session).slice(-2)).toEqual([
      splice('next-step', 0, 2, [], 'canceled'),
      splice('next-turn', 0, 2, [], 'canceled'),
    ])
    expect(setup.timeline).toEqual([
      'event:agent/inbox/spliced',
      'event:agent/inbox/spliced',
      'discarded:s1',
      'discarded:s2',
      'discarded:t1',
      'discarded:t2',
    ])
    expect(inbox.hasPending).toBe(false)
    expect(inbox.has('t1')).toBe(false)
  })

  test('an empty list writes nothing', () => {
    inbox.insert(message('t'), 'next-turn')
    inbox.clear()
    expect(splices(session)).toEqual([
      splice('next-turn', 0, 0, [message('t')]),
      splice('next-turn', 0, 1, [], 'canceled'),
    ])
    const length = session.length
    expect(inbox.clear()).toEqual([])
    expect(session.length).toBe(length)
  })

  test('spliced(a), turn/start, spliced(claim), spliced(b), spliced(b, canceled)', () => {
    const [a, b] = [message('a'), message('b')]
    inbox.insert(a, 'next-turn')
    session.append('turn/start', { turn: 1 })
    inbox.claim({ firstStep: true, turn: 1 })
    inbox.insert(b, 'next-turn')
    inbox.clear()
    expect(session.events.map((event) => [event.type, event.data])).toEqual([
      ['agent/inbox/spliced', splice('next-turn', 0, 0, [a])],
      ['turn/start', { turn: 1 }],
      ['agent/inbox/spliced', splice('next-turn', 0, 1, [])],
      ['agent/inbox/spliced', splice('next-turn', 0, 0, [b])],
      ['agent/inbox/spliced', splice('next-turn', 0, 1, [], 'canceled')],
    ])
  })
})

describe('claim: deletion splices without outcome', () => {
  beforeEach(() => {
    inbox.insert(message('t1'), 'next-turn')
    inbox.insert(message('s1'), 'next-step')
    inbox.insert(message('t2'), 'next-turn')
    inbox.insert(message('s2'), 'next-step')
    setup.timeline.length = 0
    setup.notes.length = 0
  })

  test('a first step claims all of next-step, then one next-turn prompt; notifications after all splices', () => {
    const claimed = inbox.claim({ firstStep: true, turn: 3 })
    expect(ids(claimed)).toEqual(['s1', 's2', 't1'])
    expect(Object.isFrozen(claimed)).toBe(true)
    expect(splices(session).slice(-2)).toEqual([splice('next-step', 0, 2, []), splice('next-turn', 0, 1, [])])
    expect(setup.timeline).toEqual([
      'event:agent/inbox/spliced',
      'event:agent/inbox/spliced',
      'claimed:s1',
      'claimed:s2',
      'claimed:t1',
    ])
    expect(setup.notes).toEqual([
      ['claimed', 's1', 3],
      ['claimed', 's2', 3],
      ['claimed', 't1', 3],
    ])
    expect(ids(inbox.nextTurn)).toEqual(['t2'])
    expect(inbox.nextStep).toEqual([])
  })

  test('a later step claims next-step only', () => {
    expect(ids(inbox.claim({ firstStep: false, turn: 1 }))).toEqual(['s1', 's2'])
    expect(splices(session).at(-1)).toEqual(splice('next-step', 0, 2, []))
    expect(ids(inbox.nextTurn)).toEqual(['t1', 't2'])
  })

  test('nothing pending writes nothing and returns []', () => {
    inbox.claim({ firstStep: true, turn: 1 })
    inbox.claim({ firstStep: true, turn: 2 })
    const length = session.length
    expect(inbox.claim({ firstStep: true, turn: 3 })).toEqual([])
    expect(inbox.claim({ firstStep: false, turn: 3 })).toEqual([])
    expect(session.length).toBe(length)
  })

  test('an empty next-step list writes only the next-turn splice', () => {
    inbox.claim({ firstStep: false, turn: 1 })
    const length = session.length
    expect(ids(inbox.claim({ firstStep: true, turn: 2 }))).toEqual(['t1'])
    expect(session.length).toBe(length + 1)
    expect(splices(session).at(-1)).toEqual(splice('next-turn', 0, 1, []))
  })

  test('a claimed id is no longer pending and may be queued again', () => {
    inbox.claim({ firstStep: true, turn: 1 })
    expect(inbox.has('s1')).toBe(false)
    inbox.insert(message('s1', 'again'), 'next-turn')
    expect(ids(inbox.nextTurn)).toEqual(['t2', 's1'])
  })

  test.each([0, -1, 1.5, Number.NaN, '1'])('turn %s throws InvalidArgumentError and changes nothing', (turn) => {
    const length = session.length
    expect(() => inbox.claim({ firstStep: true, turn: turn as number })).toThrow(InvalidArgumentError)
    expect(session.length).toBe(length)
    expect(ids(inbox.nextStep)).toEqual(['s1', 's2'])
  })
})

describe('the durable event comes first', () => {
  test('a synchronous session/event observer sees the pre-splice lists; a notification listener the post-splice ones', () => {
    const seen: string[][] = []
    setup.harness.on('session/event', () => {
      seen.push(['event', ...ids(inbox.nextTurn), '|', ...ids(inbox.nextStep)])
    })
    setup.harness.on('agent/inbox/inserted', () => {
      seen.push(['inserted', ...ids(inbox.nextTurn), '|', ...ids(inbox.nextStep)])
    })
    setup.harness.on('agent/inbox/claimed', () => {
      seen.push(['claimed', ...ids(inbox.nextTurn), '|', ...ids(inbox.nextStep)])
    })
    inbox.insert(message('a'), 'next-turn')
    inbox.insert(message('b'), 'next-step')
    inbox.claim({ firstStep: true, turn: 1 })
    expect(seen).toEqual([
      ['event', '|'],
      ['inserted', 'a', '|'],
      ['event', 'a', '|'],
      ['inserted', 'a', '|', 'b'],
      ['event', 'a', '|', 'b'],
      ['event', 'a', '|'],
      ['claimed', '|'],
      ['claimed', '|'],
    ])
  })

  test('a notification listener may use the inbox (the insertion is complete)', () => {
    setup.harness.on('agent/inbox/inserted', ({ message: inserted }) => {
      if (inserted.id === 'a') inbox.remove('a')
    })
    inbox.insert(message('a'), 'next-turn')
    expect(inbox.hasPending).toBe(false)
    expect(setup.notes).toEqual([
      ['inserted', 'a'],
      ['discarded', 'a'],
    ])
  })
})

describe('a failing append leaves the lists unchanged and rethrows', () => {
  beforeEach(() => {
    inbox.insert(message('t1'), 'next-turn')
    inbox.insert(message('s1'), 'next-step')
    setup.notes.length = 0
  })

  test.each<[string, (target: AgentInbox) => unknown]>([
    ['insert', (target) => target.insert(message('x'), 'next-turn')],
    ['remove', (target) => target.remove('t1')],
    ['replace', (target) => target.replace('s1', 'new')],
    ['clear', (target) => target.clear()],
    ['claim', (target) => target.claim({ firstStep: true, turn: 1 })],
  ])('%s', (_name, operation) => {
    const views = [inbox.nextTurn, inbox.nextStep]
    const length = session.length
    setup.arm()
    expectVeto(() => operation(inbox))
    expect(session.length).toBe(length)
    expect(inbox.nextTurn).toBe(views[0])
    expect(inbox.nextStep).toBe(views[1])
    expect(ids(inbox.nextTurn)).toEqual(['t1'])
    expect(ids(inbox.nextStep)).toEqual(['s1'])
    expect(inbox.has('x')).toBe(false)
    expect(setup.notes).toEqual([])
    // the failure was once: the same operation now succeeds
    operation(inbox)
    expect(session.length).toBeGreaterThan(length)
  })

  test('the very first append of a session failing leaves an empty log and an empty inbox', async () => {
    const fresh = setup.harness.sessions.create()
    const freshInbox = setup.inboxOf(fresh)
    setup.arm()
    expectVeto(() => freshInbox.insert(message('hello'), 'next-turn'))
    expect(fresh.events).toEqual([])
    expect(freshInbox.hasPending).toBe(false)
    expect(freshInbox.nextTurn).toEqual([])
  })

  test('clear failing on next-turn keeps next-step cleared and notified, then rethrows', () => {
    setup.arm(1)
    expectVeto(() => inbox.clear())
    expect(inbox.nextStep).toEqual([])
    expect(ids(inbox.nextTurn)).toEqual(['t1'])
    expect(setup.notes).toEqual([['discarded', 's1']])
    expect(splices(session).at(-1)).toEqual(splice('next-step', 0, 1, [], 'canceled'))
  })

  test('claim failing on next-turn keeps the next-step claim and notifies it, then rethrows', () => {
    setup.arm(1)
    expectVeto(() => inbox.claim({ firstStep: true, turn: 4 }))
    expect(inbox.nextStep).toEqual([])
    expect(ids(inbox.nextTurn)).toEqual(['t1'])
    expect(setup.notes).toEqual([['claimed', 's1', 4]])
  })

  test('a disposed session makes every write throw SESSION_DISPOSED; lists unchanged', async () => {
    await setup.harness.sessions.dispose(session)
    expect(() => inbox.insert(message('x'), 'next-step')).toThrow(expect.objectContaining({ code: 'SESSION_DISPOSED' }))
    expect(() => inbox.remove('t1')).toThrow(expect.objectContaining({ code: 'SESSION_DISPOSED' }))
    expect(ids(inbox.nextTurn)).toEqual(['t1'])
    expect(ids(inbox.nextStep)).toEqual(['s1'])
  })
})

describe('message ids are unique across both lists', () => {
  test.each<['next-turn' | 'next-step', 'next-turn' | 'next-step']>([
    ['next-turn', 'next-turn'],
    ['next-turn', 'next-step'],
    ['next-step', 'next-turn'],
    ['next-step', 'next-step'],
  ])('a pending id in %s cannot be queued in %s', (first, second) => {
    inbox.insert(message('dup', 'one'), first)
    const views = [inbox.nextTurn, inbox.nextStep]
    let thrown: unknown
    try {
      inbox.insert(message('dup', 'two'), second)
    } catch (error) {
      thrown = error
    }
    expect(DuplicateMessageError.is(thrown)).toBe(true)
    expect(thrown).toMatchObject({ code: 'DUPLICATE_MESSAGE_ID', messageId: 'dup' })
    expect(session.length).toBe(1)
    expect(inbox.nextTurn).toBe(views[0])
    expect(inbox.nextStep).toBe(views[1])
    expect(setup.notes).toEqual([['inserted', 'dup']])
  })
})

describe('the views', () => {
  test('frozen, the same array until the list changes; an array handed out never changes', () => {
    const empty = inbox.nextTurn
    expect(Object.isFrozen(empty)).toBe(true)
    expect(inbox.nextTurn).toBe(empty)
    inbox.insert(message('a'), 'next-turn')
    const one = inbox.nextTurn
    expect(one).not.toBe(empty)
    expect(empty).toEqual([])
    const steps = inbox.nextStep
    inbox.insert(message('b'), 'next-turn')
    expect(inbox.nextStep).toBe(steps)
    expect(one).toEqual([message('a')])
    expect(ids(inbox.nextTurn)).toEqual(['a', 'b'])
    expect(() => (inbox.nextTurn as UserMessage[]).push(message('c'))).toThrow(TypeError)
  })

  test('a long queue drained one prompt per turn keeps its order', () => {
    for (let index = 0; index < 300; index++) inbox.insert(message(`p${index}`), 'next-turn')
    const order: string[] = []
    for (let turn = 1; turn <= 150; turn++) order.push(...ids(inbox.claim({ firstStep: true, turn })))
    inbox.insert(message('tail'), 'next-turn')
    expect(inbox.remove('p200')).toBe(true)
    expect(order).toEqual(Array.from({ length: 150 }, (_, index) => `p${index}`))
    expect(ids(inbox.nextTurn)).toEqual([
      ...Array.from({ length: 150 }, (_, index) => `p${index + 150}`).filter((id) => id !== 'p200'),
      'tail',
    ])
    expect(ids(setup.inboxOf(session).nextTurn)).toEqual(ids(inbox.nextTurn))
  })

  test('the constructor checks its options', () => {
    expect(() => setup.inboxOf(undefined as unknown as Session)).toThrow(InvalidArgumentError)
    expect(() => new AgentInbox({ session, emit: 1 as unknown as () => void })).toThrow(InvalidArgumentError)
  })
})
