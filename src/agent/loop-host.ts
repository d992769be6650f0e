import type { Context } from '../kernel/context.js'
import type { IdSource } from '../kernel/host-services.js'
import type { RuntimeContextProjection } from '../prompt/runtime-context-projection.js'
import type { SystemPrompt } from '../prompt/system-prompt.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { Session } from '../session/session.js'
import type { ApprovalBroker } from '../tools/approval-broker.js'
import type { ToolRunOptions } from '../tools/tool-step-context.js'
import type { Agent } from './agent.js'
import type { AgentInbox } from './agent-inbox.js'
import type { RequestBuilder } from './request-builder.js'

/**
 * Everything the turn and step runners read from their agent, wired once by the agent and never
 * changed: the one piece of state a request depends on (whether the driver logged a header yet)
 * belongs to the request builder.
 */
export interface LoopHost {
  /** The agent handle (payloads, scope key). */
  readonly agent: Agent
  /** The agent context: dispatches are routed through it with `{ scope: agent }`. */
  readonly ctx: Context
  /** The agent's session. */
  readonly session: Session
  /** The options the tool scheduler reads. */
  readonly toolOptions: ToolRunOptions
  /** The session registry (durability checkpoints). */
  readonly sessions: SessionRegistry
  /** The system prompt. */
  readonly systemPrompt: SystemPrompt
  /** The runtime-context projection. */
  readonly projection: RuntimeContextProjection
  /** Builds the step's model requests. */
  readonly requests: RequestBuilder
  /** The id source. */
  readonly ids: IdSource
  /** The approval broker. */
  readonly approvals: ApprovalBroker
  /** The inbox. */
  readonly inbox: AgentInbox
}
