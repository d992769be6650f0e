/**
 * Shared set-up of the approval broker suites: a harness with a fake clock and fake ids, sessions
 * with turn 1 step 1 open, agents on scoped contexts with their brokers, call builders and the
 * expected `approval/*` events.
 *
 * @module
 */
import {
  type ApprovalBroker,
  type Context,
  createApprovalBroker,
  createHarness,
  type Harness,
  type JsonObject,
  type Session,
} from 'yoke'
import { registerApprovalEventTypes, type ToolAgent, type ToolCallInfo, toolEvents } from '../../src/tools/index.js'
import { type FakeClock, fakeClock, fakeIds } from 'yoke/testing'
import { recordingLogger } from '../helpers/recording-logger.js'
import { SS, TS } from '../session/builders.js'
import { appendAll } from '../session/session-helpers.js'

const harnesses: Harness[] = []

/** Closes every harness {@link setup} made; call it from `afterEach`. */
export async function closeHarnesses(): Promise<void> {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
}

/** What {@link setup} returns. */
export interface Setup {
  readonly clock: FakeClock
  readonly harness: Harness
  readonly session: Session
  readonly agent: ToolAgent
  readonly ctx: Context
  readonly broker: ApprovalBroker
}

/** A harness (fake clock at 1000, fake ids), the approval event types, a session with turn 1 step 1 open and one agent's broker on a scoped context. */
export async function setup(): Promise<Setup> {
  const clock = fakeClock({ now: 1000 })
  const harness = await createHarness({
    clock,
    ids: fakeIds(),
    logger: recordingLogger(),
    patches: [{ id: 'persistence', disabled: true }],
  })
  harnesses.push(harness)
  harness.ctx.registerEvents(toolEvents)
  if (!harness.sessions.eventTypes().includes('approval/asked')) registerApprovalEventTypes(harness.sessions)
  const { agent, ctx, broker } = agentOn(harness, 'agent-1')
  return { clock, harness, session: agent.session, agent, ctx, broker }
}

/** A new session (turn 1 step 1 open), its agent, a context scoped to that agent and its broker. */
export function agentOn(harness: Harness, label: string): { agent: ToolAgent; ctx: Context; broker: ApprovalBroker } {
  const session = appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
  const agent: ToolAgent = Object.freeze({ id: session.id, session })
  const ctx = harness.ctx.child(label, { scope: agent })
  return { agent, ctx, broker: createApprovalBroker({ ctx, agent }) }
}

/** A frozen call `c1` of tool `t` with arguments `{"path":"a"}` in turn 1 step 1; `fields` override. */
export function callOf(agent: ToolAgent, fields: Partial<ToolCallInfo> = {}): ToolCallInfo {
  return Object.freeze({
    agent,
    session: agent.session,
    turn: 1,
    step: 1,
    callId: 'c1',
    name: 't',
    arguments: '{"path":"a"}',
    args: { path: 'a' },
    signal: new AbortController().signal,
    ...fields,
  })
}

/** Lets pending promise continuations run. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The `approval/*` events of a session, as `{ type, data }`. */
export function approvalEvents(session: Session): { type: string; data: unknown }[] {
  return session.events
    .filter((event) => event.type.startsWith('approval/'))
    .map((event) => ({ type: event.type, data: event.data }))
}

/** The expected `approval/asked` of {@link callOf}'s call, id `a1`; `fields` override. */
export const asked = (fields: JsonObject = {}): { type: string; data: JsonObject } => ({
  type: 'approval/asked',
  data: { approvalId: 'a1', turn: 1, step: 1, callId: 'c1', toolName: 't', arguments: '{"path":"a"}', ...fields },
})
/** An expected `approval/decided` with id `a1` unless `data` names another. */
export const decided = (data: JsonObject): { type: string; data: JsonObject } => ({
  type: 'approval/decided',
  data: { approvalId: 'a1', ...data },
})

/** A promise the test resolves by hand. */
export function gate<T>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => {
    open = resolve
  })
  return { promise, open }
}
