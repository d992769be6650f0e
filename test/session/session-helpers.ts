/**
 * Helpers shared by the session suites: the harness every registry test starts from, live appends
 * of builder plans, the "Rejects X" assertions, and a few plan builders and payload readers.
 * The notation builders themselves live in `builders.ts`.
 *
 * @module
 */
import { expect } from 'vitest'
import {
  createHarness,
  type Harness,
  type HarnessError,
  type HarnessOptions,
  type JsonObject,
  type JsonValue,
  type Session,
  type SessionEvent,
  type SessionRegistry,
} from 'yoke'
import type { HarnessErrorClass } from '../../src/errors/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'
import { recordingLogger } from '../helpers/recording-logger.js'
import { type EventPlan, stampSeq, UM } from './builders.js'

/** A started harness with a fake clock at 1000, fake ids and a recording logger; `options` override any of them. */
export function freshHarness(options: HarnessOptions = {}): Promise<Harness> {
  return createHarness({ clock: fakeClock({ now: 1000 }), ids: fakeIds(), logger: recordingLogger(), ...options })
}

/** A {@link freshHarness} together with its session registry (`harness.ctx.sessions`). */
export async function freshRegistry(
  options: HarnessOptions = {},
): Promise<{ harness: Harness; sessions: SessionRegistry }> {
  const harness = await freshHarness(options)
  return { harness, sessions: harness.ctx.sessions }
}

/** Records the id of every session `harness` announces with `session/created`, in order, into the returned array. */
export function recordCreatedIds(harness: Harness): string[] {
  const created: string[] = []
  harness.on('session/created', ({ session }) => {
    created.push(session.id)
  })
  return created
}

/** Appends a builder plan live, resolving an `AM` placeholder id to `a-<seq>` first. */
export function append(session: Session, plan: EventPlan): SessionEvent {
  const stamped = stampSeq(plan, session.length)
  return session.append(stamped.type, stamped.data, stamped.options)
}

/** Appends the plans in order with {@link append}; returns `session`. */
export function appendAll(session: Session, plans: readonly EventPlan[]): Session {
  for (const plan of plans) append(session, plan)
  return session
}

/** Asserts `error` is an instance of `errorClass` with `code` and the given `fields` (deep-equal); returns it typed. */
export function expectError<E>(
  error: unknown,
  errorClass: HarnessErrorClass<E>,
  code: string,
  fields: Readonly<Record<string, unknown>> = {},
): E {
  expect((errorClass as unknown as typeof HarnessError).is(error), `${String(error)} is a ${errorClass.brand}`).toBe(
    true,
  )
  const record = error as Record<string, unknown>
  expect(record['code']).toBe(code)
  for (const [key, value] of Object.entries(fields)) expect(record[key], key).toEqual(value)
  return error as E
}

/** Asserts "Rejects X": `action` throws `errorClass` with `code` and `fields`, and `length`, `events`, `surfaceNodes()`, `deriveMessages()` stay unchanged. */
export function expectRejects<E>(
  session: Session,
  action: () => unknown,
  errorClass: HarnessErrorClass<E>,
  code: string,
  fields: Readonly<Record<string, unknown>> = {},
): E {
  const length = session.length
  const events = session.events
  const nodes = [...session.surfaceNodes()]
  const messages = session.deriveMessages()
  let thrown: unknown
  let threw = false
  try {
    action()
  } catch (error) {
    thrown = error
    threw = true
  }
  expect(threw, `expected ${errorClass.brand} ${code}, but nothing was thrown`).toBe(true)
  const typed = expectError(thrown, errorClass, code, fields)
  expect(session.length).toBe(length)
  expect(session.events).toBe(events)
  expect(session.surfaceNodes()).toEqual(nodes)
  expect(session.deriveMessages()).toBe(messages)
  return typed
}

/** A `UM(text)` that replaces the surface nodes from `start` to `end`, with the given sources. */
export function replaceUM(text: string, start: number, end: number, sources: readonly number[]): EventPlan {
  return { ...UM(text), options: { surfaceOp: { op: 'replace', start, end }, sourceEventSeqs: sources } }
}

/** A log-only `test/note { n }` plan (the type must be registered first). */
export function note(value: number): EventPlan {
  return { type: 'test/note', data: { n: value }, options: {} }
}

/** The JSON value at `path` under `value` (string keys into objects, number keys into arrays), or `undefined`. */
export function field(value: JsonValue | undefined, ...path: (string | number)[]): JsonValue | undefined {
  let current = value
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined
    if (Array.isArray(current)) {
      if (typeof key !== 'number') return undefined
      current = current[key]
    } else current = (current as JsonObject)[String(key)]
  }
  return current
}

/** The text of the first block of the first result of a `tool/result` event, or `undefined`. */
export function resultText(event: SessionEvent | undefined): JsonValue | undefined {
  return field(event?.data, 'message', 'content', 0, 'content', 0, 'text')
}
