/**
 * Shared setup of the inbox suites: a harness whose catalog knows the inbox notifications, a
 * session, an inbox emitting through `harness.ctx.emit`, one timeline of committed events and
 * notifications, and an arming commit guard.
 *
 * @module
 */
import {
  createHarness,
  definePlugin,
  type Harness,
  type IdSource,
  type Session,
  type SessionEvent,
  type UserMessage,
} from 'yoke'
import { agentEvents, normalizeUserMessage } from '../../src/agent/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'
import { AgentInbox } from '../../src/agent/agent-inbox.js'

/** Registers the inbox notifications in the harness catalog (the agent-loop entry will do it for real). */
export const inboxEventsPlugin = definePlugin({ name: 'inbox-events', events: [agentEvents], apply() {} })

/** One notification as recorded: kind, message id and (for claims) the turn. */
export type Note = readonly ['inserted' | 'discarded', string] | readonly ['claimed', string, number]

/** What {@link inboxHarness} returns. */
export interface InboxHarness {
  readonly harness: Harness
  /** Every notification, in order. */
  readonly notes: Note[]
  /** Committed events (`event:<type>`) and notifications (`<kind>:<id>`) of every session, interleaved in order. */
  readonly timeline: string[]
  /** The error the armed guard throws. */
  readonly failure: Error
  /** Makes the append after `skip` successful guarded appends fail once. */
  arm(skip?: number): void
  /** Cancels an armed failure. */
  disarm(): void
  /** A fresh inbox over `session`, emitting through the harness, with replacement ids `r1`, `r2`, … */
  inboxOf(session: Session, ids?: IdSource): AgentInbox
}

/** A started harness (fake clock at 1000, fake ids) set up for inbox tests. */
export async function inboxHarness(): Promise<InboxHarness> {
  const harness = await createHarness({ clock: fakeClock({ now: 1000 }), ids: fakeIds(), plugins: [inboxEventsPlugin] })
  const notes: Note[] = []
  const timeline: string[] = []
  const failure = new Error('storage refused the splice')
  let failIn: number | undefined
  harness.sessions.addCommitGuard(
    () => {
      if (failIn === undefined) return
      if (failIn === 0) {
        failIn = undefined
        throw failure
      }
      failIn--
    },
    { label: 'flaky' },
  )
  harness.on('session/event', ({ event }) => {
    timeline.push(`event:${event.type}`)
  })
  harness.on('agent/inbox/inserted', ({ message }) => {
    notes.push(['inserted', message.id])
    timeline.push(`inserted:${message.id}`)
  })
  harness.on('agent/inbox/discarded', ({ message }) => {
    notes.push(['discarded', message.id])
    timeline.push(`discarded:${message.id}`)
  })
  harness.on('agent/inbox/claimed', ({ message, turn }) => {
    notes.push(['claimed', message.id, turn])
    timeline.push(`claimed:${message.id}`)
  })
  return {
    harness,
    notes,
    timeline,
    failure,
    arm(skip = 0) {
      failIn = skip
    },
    disarm() {
      failIn = undefined
    },
    inboxOf(session, ids = fakeIds({ prefixes: { message: 'r' } })) {
      return new AgentInbox({ session, ids, emit: (name, payload) => harness.ctx.emit(name, payload) })
    },
  }
}

/** A frozen text message from the user. */
export function message(id: string, text: string = id): UserMessage {
  return normalizeUserMessage(text, id)
}

/** The data of every `agent/inbox/spliced` in the log, in order. */
export function splices(session: Session): unknown[] {
  return session.events.filter((event) => event.type === 'agent/inbox/spliced').map((event) => event.data)
}

/** The ids of a list. */
export function ids(list: readonly UserMessage[]): string[] {
  return list.map((entry) => entry.id)
}

/** `{ target, start, removedCount?, inserted, outcome? }` as the inbox logs it. */
export function splice(
  target: 'next-turn' | 'next-step',
  start: number,
  removedCount: number,
  inserted: readonly UserMessage[],
  outcome?: 'canceled',
): Record<string, unknown> {
  return {
    target,
    start,
    ...(removedCount === 0 ? {} : { removedCount }),
    inserted,
    ...(outcome === undefined ? {} : { outcome }),
  }
}

/** An `agent/inbox/spliced` seed event at `seq`. */
export function splicedSeed(seq: number, data: Record<string, unknown>): SessionEvent {
  return { type: 'agent/inbox/spliced', seq, time: 1000, data } as unknown as SessionEvent
}
