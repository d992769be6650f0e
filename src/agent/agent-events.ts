import { defineEvents, type Emit, type EventCatalog } from '../kernel/event-catalog.js'
import type { UserMessage } from '../session/message.js'

/** Payload of `agent/inbox/inserted` and `agent/inbox/discarded`. */
export interface InboxMessagePayload {
  /** The queued (or discarded) message, frozen. */
  readonly message: UserMessage
}

/** Payload of `agent/inbox/claimed`. */
export interface InboxClaimedPayload {
  /** The claimed message, frozen. */
  readonly message: UserMessage
  /** The turn that claimed it. */
  readonly turn: number
}

/** The live events of the agent loop; listener throws are contained. */
export type AgentEvents = {
  /** A message was queued in the inbox (after its `agent/inbox/spliced` is logged). */
  readonly 'agent/inbox/inserted': Emit<InboxMessagePayload>
  /** A pending message was removed, replaced or cleared (after its canceling splice is logged). */
  readonly 'agent/inbox/discarded': Emit<InboxMessagePayload>
  /** A turn claimed a pending message; one per message, after all splices of the claim, next-step items first. */
  readonly 'agent/inbox/claimed': Emit<InboxClaimedPayload>
}

/** The catalog of {@link AgentEvents}. */
export const agentEvents: EventCatalog<AgentEvents> = defineEvents<AgentEvents>({
  'agent/inbox/inserted': 'emit',
  'agent/inbox/discarded': 'emit',
  'agent/inbox/claimed': 'emit',
})
