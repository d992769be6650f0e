import { defineEvents, type Emit, type EventCatalog, type Serial, type Waterfall } from '../kernel/event-catalog.js'
import type { LlmFailure } from '../session/llm-failure.js'
import type { UserMessage } from '../session/message.js'
import type { TurnEndReason } from '../session/turn-end-reason.js'
import type { Agent, AgentStatus } from './agent.js'
import type { CallConfigSeed } from './resolve-call-config.js'

/** `agent/status` (emit): the derived status changed. */
export interface AgentStatusPayload {
  /** The agent. */
  readonly agent: Agent
  /** The new status. */
  readonly status: AgentStatus
}

/** What `agent/pre-step` resolves with. */
export type PreStepDecision =
  | {
      /** Open the step with these messages. */
      readonly kind: 'enter'
      /** The messages to log as `user/message`s, in order. */
      readonly messages: readonly UserMessage[]
    }
  | {
      /** End the turn `blocked`. */
      readonly kind: 'reject'
    }

/** `agent/pre-step` (waterfall): decides what enters the step about to open. */
export interface PreStepPayload {
  /** The agent. */
  readonly agent: Agent
  /** The open turn. */
  readonly turn: number
  /** The step about to open. */
  readonly step: number
  /**
   * The claimed messages (frozen). The runtime-context snapshot candidate is not among them: the
   * default decision enters these plus the candidate, if any.
   */
  readonly messages: readonly UserMessage[]
  /** The turn signal. */
  readonly signal: AbortSignal
}

/** `agent/request` (waterfall): the call config of one attempt, before the model's `prepareCall`. */
export interface AgentRequestPayload {
  /** The agent. */
  readonly agent: Agent
  /** The open turn. */
  readonly turn: number
  /** The open step. */
  readonly step: number
  /** The attempt, from 1. */
  readonly attempt: number
  /** The deep-frozen seed; a listener returns a replacement. */
  readonly config: Readonly<CallConfigSeed>
  /** The turn signal. */
  readonly signal: AbortSignal
}

/** `agent/turn-stopping` (serial): the turn is about to close; a listener may queue next-step work. */
export interface TurnStoppingPayload {
  /** The agent. */
  readonly agent: Agent
  /** The open turn. */
  readonly turn: number
  /** The reason the turn would end with. */
  readonly reason: TurnEndReason
  /** The turn signal. */
  readonly signal: AbortSignal
}

/**
 * `agent/error` (emit): a turn ended `error`; `turn/start` could not be logged; or `turn/end`
 * could not be logged or flushed before the turn's promise settles (with `turn`).
 */
export interface AgentErrorPayload {
  /** The agent. */
  readonly agent: Agent
  /** The turn, when one was open. */
  readonly turn?: number
  /** The step, when one was open. */
  readonly step?: number
  /** What was thrown. */
  readonly error: unknown
  /** Its normalized failure. */
  readonly failure: LlmFailure
  /** What stays queued. */
  readonly queued: {
    /** Prompts waiting for a later turn. */
    readonly nextTurn: number
    /** Messages waiting for the next step. */
    readonly nextStep: number
  }
}

/** `agent/created` and `agent/disposed` (emit). */
export interface AgentLifecyclePayload {
  /** The agent. */
  readonly agent: Agent
}

/** `agent/session-start` (emit): a published agent starts driving its session. */
export interface AgentSessionStartPayload {
  /** The agent. */
  readonly agent: Agent
  /** How the session came to be. */
  readonly source: 'create' | 'resume'
}

/** The live events of the agent loop, defined by the `agent-loop` entry. */
export type AgentLoopEvents = {
  /** The derived status changed. */
  readonly 'agent/status': Emit<AgentStatusPayload>
  /** What enters a step. */
  readonly 'agent/pre-step': Waterfall<PreStepPayload, PreStepDecision>
  /** The call config of an attempt. */
  readonly 'agent/request': Waterfall<AgentRequestPayload, Readonly<CallConfigSeed>>
  /** A turn is about to close. */
  readonly 'agent/turn-stopping': Serial<TurnStoppingPayload, unknown>
  /** A turn failed. */
  readonly 'agent/error': Emit<AgentErrorPayload>
  /** An agent was published. */
  readonly 'agent/created': Emit<AgentLifecyclePayload>
  /** A published agent starts driving its session. */
  readonly 'agent/session-start': Emit<AgentSessionStartPayload>
  /** An agent left the registry. */
  readonly 'agent/disposed': Emit<AgentLifecyclePayload>
}

/** The catalog of {@link AgentLoopEvents}. */
export const agentLoopEvents: EventCatalog<AgentLoopEvents> = defineEvents<AgentLoopEvents>({
  'agent/status': 'emit',
  'agent/pre-step': 'waterfall',
  'agent/request': 'waterfall',
  'agent/turn-stopping': 'serial',
  'agent/error': 'emit',
  'agent/created': 'emit',
  'agent/session-start': 'emit',
  'agent/disposed': 'emit',
})
