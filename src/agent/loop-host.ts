import type { Context } from '../kernel/context.js'
import type { IdSource } from '../kernel/host-services.js'
import type { ModelRegistry } from '../model/model-registry.js'
import type { RuntimeContextProjection } from '../prompt/runtime-context-projection.js'
import type { SystemPrompt } from '../prompt/system-prompt.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { Session } from '../session/session.js'
import type { ApprovalBroker } from '../tools/approval-broker.js'
import type { ToolRunOptions } from '../tools/tool-step-context.js'
import type { Agent } from './agent.js'
import type { AgentInbox } from './agent-inbox.js'
import type { AgentOptions } from './agent-options.js'
import type { LoopRequestMarks } from './build-request.js'

/** Everything the turn and step runners read from their agent, wired once by the driver. */
export interface LoopHost {
  /** The agent handle (payloads, scope key). */
  readonly agent: Agent
  /** The agent context: dispatches are routed through it with `{ scope: agent }`. */
  readonly ctx: Context
  /** The agent's session. */
  readonly session: Session
  /** The frozen options. */
  readonly options: AgentOptions
  /** The options the tool scheduler reads. */
  readonly toolOptions: ToolRunOptions
  /** The session registry (durability checkpoints). */
  readonly sessions: SessionRegistry
  /** The model registry. */
  readonly models: ModelRegistry
  /** The system prompt. */
  readonly systemPrompt: SystemPrompt
  /** The runtime-context projection. */
  readonly projection: RuntimeContextProjection
  /** The harness's loop-request marks. */
  readonly marks: LoopRequestMarks
  /** The id source. */
  readonly ids: IdSource
  /** The approval broker. */
  readonly approvals: ApprovalBroker
  /** The inbox. */
  readonly inbox: AgentInbox
  /** Whether this driver logged no `request/header` yet; cleared by the step runner. */
  firstRequestOfDriver: boolean
}
