import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  createSession,
  type Harness,
  interruptedTurnClosers,
  type JsonObject,
  type Session,
  type SessionEvent,
  SessionForkError,
  type SessionRegistry,
} from 'yoke'
import { createSessionCatalog } from '../../src/session/index.js'
import { fakeClock } from 'yoke/testing'
import { AM, call, type EventPlan, SE, SS, stampSeq, TC, TE, TR, TS, text, UM, withSources } from './builders.js'
import { appendAll, freshRegistry } from './session-helpers.js'

const runs = { numRuns: 100 }

interface MessageShape {
  readonly chunks: number
  readonly calls: number
  readonly withText: boolean
}

interface StepShape {
  readonly users: number
  readonly messages: readonly MessageShape[]
}

interface TurnShape {
  readonly steps: readonly StepShape[]
  readonly reason: string
}

type BlockShape = { readonly kind: 'turn'; readonly turn: TurnShape } | { readonly kind: 'user' }

interface Script {
  readonly blocks: readonly BlockShape[]
  /** After the event at position i, a `test/note` follows when `notes[i]` is true. */
  readonly notes: readonly boolean[]
}

const messageArbitrary: fc.Arbitrary<MessageShape> = fc.record({
  chunks: fc.integer({ min: 0, max: 2 }),
  calls: fc.integer({ min: 0, max: 2 }),
  withText: fc.boolean(),
})

const stepArbitrary: fc.Arbitrary<StepShape> = fc.record({
  users: fc.integer({ min: 0, max: 2 }),
  messages: fc.array(messageArbitrary, { maxLength: 2 }),
})

const turnArbitrary: fc.Arbitrary<TurnShape> = fc.record({
  steps: fc.array(stepArbitrary, { maxLength: 3 }),
  reason: fc.constantFrom('completed', 'blocked', 'max-tokens', 'interrupted'),
})

const blockArbitrary: fc.Arbitrary<BlockShape> = fc.oneof(
  { weight: 4, arbitrary: turnArbitrary.map((turn): BlockShape => ({ kind: 'turn', turn })) },
  { weight: 1, arbitrary: fc.constant<BlockShape>({ kind: 'user' }) },
)

const scriptArbitrary: fc.Arbitrary<Script> = fc.record({
  blocks: fc.array(blockArbitrary, { minLength: 1, maxLength: 4 }),
  notes: fc.array(fc.boolean(), { maxLength: 120 }),
})

/** Turns a script into the plans a producer (the agent loop) would append, ids and sources final. */
function producerPlans(script: Script): EventPlan[] {
  const plans: EventPlan[] = []
  let position = 0
  let counter = 0
  const push = (plan: EventPlan): number => {
    const seq = plans.length
    plans.push(stampSeq(plan, seq))
    if (script.notes[position] === true) plans.push({ type: 'test/note', data: { after: seq }, options: {} })
    position += 1
    return seq
  }
  let turnNumber = 0
  for (const block of script.blocks) {
    if (block.kind === 'user') {
      push(UM(`between-${counter++}`))
      continue
    }
    turnNumber += 1
    push(TS(turnNumber))
    block.turn.steps.forEach((step, index) => {
      const stepNumber = index + 1
      push(SS(turnNumber, stepNumber))
      for (let user = 0; user < step.users; user++) push(UM(`entered-${counter++}`))
      for (const message of step.messages) {
        const chunkSeqs: number[] = []
        for (let chunk = 0; chunk < message.chunks; chunk++) {
          chunkSeqs.push(
            push({
              type: 'assistant/chunk',
              data: { turn: turnNumber, step: stepNumber, chunk: { type: 'text-delta', index: 0, text: `t${chunk}` } },
              options: {},
            }),
          )
        }
        const callIds = Array.from({ length: message.calls }, () => `c${counter++}`)
        const blocks: JsonObject[] = [...(message.withText ? [text(`reply-${counter++}`)] : []), ...callIds.map(call)]
        push(withSources(AM(turnNumber, stepNumber, ...blocks), chunkSeqs))
        for (const callId of callIds) {
          const callSeq = push(TC(turnNumber, stepNumber, callId))
          push(TR(turnNumber, stepNumber, callId, callSeq))
        }
      }
      push(SE(turnNumber, stepNumber))
    })
    push(TE(turnNumber, block.turn.reason))
  }
  return plans
}

/** The seqs after which no turn is open. */
function balancedSeqs(events: readonly SessionEvent[]): number[] {
  const balanced: number[] = []
  let open = false
  for (const event of events) {
    if (event.type === 'turn/start') open = true
    else if (event.type === 'turn/end') open = false
    if (!open) balanced.push(event.seq)
  }
  return balanced
}

const catalog = createSessionCatalog()
catalog.registerEventType('test/note')
let seededCount = 0

function seeded(seed: readonly unknown[]): Session {
  seededCount += 1
  return createSession({ id: `copy-${seededCount}`, seed, catalog, clock: fakeClock({ now: 2000 }) })
}

let harness: Harness
let sessions: SessionRegistry

beforeAll(async () => {
  ;({ harness, sessions } = await freshRegistry())
  sessions.registerEventType('test/note')
})

afterAll(() => harness.close())

/** Runs the plans as live appends in a fresh registry session; disposes it afterwards. */
async function withLive(plans: readonly EventPlan[], check: (session: Session) => void | Promise<void>): Promise<void> {
  const session = sessions.create()
  try {
    appendAll(session, plans)
    await check(session)
  } finally {
    for (const live of sessions.list()) await sessions.dispose(live)
  }
}

describe('properties of valid producer logs', () => {
  test('(a) live appends keep events[i].seq === i and end balanced', async () => {
    await fc.assert(
      fc.asyncProperty(scriptArbitrary, async (script) => {
        const plans = producerPlans(script)
        await withLive(plans, (session) => {
          const events = session.events
          expect(events).toHaveLength(plans.length)
          const misplaced = events.filter(
            (event, index) =>
              event.seq !== index ||
              event.type !== plans[index]?.type ||
              event.time !== 1000 ||
              session.at(index) !== event,
          )
          expect(misplaced).toEqual([])
          expect(session.turnState()).toMatchObject({ openTurn: null, openStep: null, pendingCallIds: [] })
          for (const message of session.deriveMessages()) {
            expect(Object.isFrozen(message)).toBe(true)
            expect(['user', 'assistant']).toContain(message.role)
          }
        })
      }),
      runs,
    )
  })

  test('(b) replaying the log as a seed derives deep-equal messages', async () => {
    await fc.assert(
      fc.asyncProperty(scriptArbitrary, async (script) => {
        await withLive(producerPlans(script), (session) => {
          const copy = seeded(session.events)
          expect(copy.length).toBe(session.length + 1)
          expect(copy.events.slice(0, session.length)).toStrictEqual(session.events)
          expect(copy.at(session.length)).toStrictEqual({
            type: 'session/end-seed',
            seq: session.length,
            time: 2000,
            data: {},
          })
          expect(copy.firstLiveSeq).toBe(session.length)
          expect(copy.deriveMessages()).toStrictEqual(session.deriveMessages())
          expect(copy.surfaceNodes()).toStrictEqual(session.surfaceNodes())
          expect(copy.turnState()).toStrictEqual(session.turnState())
          const reopened = seeded(copy.events)
          expect(reopened.length).toBe(copy.length)
          expect(reopened.deriveMessages()).toStrictEqual(session.deriveMessages())
        })
      }),
      runs,
    )
  })

  test('(c) closers after any prefix give a log that seeds without error and ends balanced', () => {
    fc.assert(
      fc.property(scriptArbitrary, fc.nat(), (script, cut) => {
        const plans = producerPlans(script)
        const live = createSession({ id: 'source', catalog, clock: fakeClock({ now: 1000 }) })
        appendAll(live, plans)
        const prefix = live.events.slice(0, cut % (live.length + 1))
        const closers = interruptedTurnClosers(prefix)
        const last = prefix.at(-1)
        closers.forEach((closer, index) => {
          expect(closer.seq).toBe(prefix.length + index)
          expect(closer.time).toBe(last?.time)
        })
        const repaired = seeded([...prefix, ...closers])
        expect(repaired.turnState().openTurn).toBeNull()
        expect(repaired.turnState().openStep).toBeNull()
        expect(repaired.turnState().pendingCallIds).toEqual([])
        expect(repaired.length).toBe(prefix.length + closers.length + 1)
        if (balancedSeqs(prefix).at(-1) === last?.seq) expect(closers).toEqual([])
        else expect(closers.at(-1)?.type).toBe('turn/end')
        expect(interruptedTurnClosers([...prefix, ...closers])).toEqual([])
      }),
      runs,
    )
  })

  test('(d) a fork at any balanced boundary is the parent prefix plus one marker', async () => {
    await fc.assert(
      fc.asyncProperty(scriptArbitrary, fc.nat(), async (script, pick) => {
        await withLive(producerPlans(script), (parent) => {
          const balanced = balancedSeqs(parent.events)
          if (balanced.length === 0) {
            const child = sessions.fork(parent)
            expect(child.events).toStrictEqual([{ type: 'session/end-seed', seq: 0, time: 1000, data: {} }])
            return
          }
          const at = balanced[pick % balanced.length] as number
          const child = sessions.fork(parent, { at })
          expect(child.length).toBe(at + 2)
          expect(child.events.slice(0, at + 1)).toStrictEqual(parent.events.slice(0, at + 1))
          expect(child.at(at + 1)).toStrictEqual({ type: 'session/end-seed', seq: at + 1, time: 1000, data: {} })
          expect(child.header).toMatchObject({ parentSession: parent.id, seedLength: at + 1 })
          expect(child.turnState().openTurn).toBeNull()
          const prefixCopy = seeded(parent.events.slice(0, at + 1))
          expect(child.deriveMessages()).toStrictEqual(prefixCopy.deriveMessages())
        })
      }),
      runs,
    )
  })

  test('(d) a fork inside an open turn names a balanced seq that forks', async () => {
    await fc.assert(
      fc.asyncProperty(scriptArbitrary, fc.nat(), async (script, pick) => {
        await withLive(producerPlans(script), (parent) => {
          const balanced = new Set(balancedSeqs(parent.events))
          const unbalanced = parent.events.map((event) => event.seq).filter((seq) => !balanced.has(seq))
          if (unbalanced.length === 0) return
          const at = unbalanced[pick % unbalanced.length] as number
          let error: unknown
          try {
            sessions.fork(parent, { at })
          } catch (caught) {
            error = caught
          }
          expect(SessionForkError.is(error)).toBe(true)
          const refused = error as SessionForkError
          expect(refused.code).toBe('OPEN_TURN')
          const nearest = refused.nearestBalancedSeq
          if (nearest === null || nearest === undefined) {
            expect(nearest).toBeNull()
            expect(parent.at(0)?.type).toBe('turn/start')
            return
          }
          expect(nearest).toBeLessThan(at)
          expect(balanced.has(nearest)).toBe(true)
          expect(parent.at(nearest + 1)?.type).toBe('turn/start')
          expect(sessions.fork(parent, { at: nearest }).length).toBe(nearest + 2)
        })
      }),
      runs,
    )
  })
})
