import type { Context } from '../kernel/context.js'
import type { IdSource } from '../kernel/host-services.js'
import { ModelsKey } from '../model/models-key.js'
import { SystemPromptKey } from '../prompt/system-prompt-key.js'
import { SessionsKey } from '../session/sessions-key.js'
import { createRuntimeContextProjection, type RuntimeContextProjection } from '../prompt/runtime-context-projection.js'
import type { SystemPrompt } from '../prompt/system-prompt.js'
import type { Session } from '../session/session.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { InitiatorControl } from '../scope/initiator.js'
import type { ApprovalBroker } from '../tools/approval-broker.js'
import { createApprovalBroker } from '../tools/create-approval-broker.js'
import { defaultToolRunOptions, type ToolRunOptions } from '../tools/tool-step-context.js'
import type { Agent } from './agent.js'
import type { AgentInbox } from './agent-inbox.js'
import type { AgentOptions } from './agent-options.js'
import { verifyReconstruction } from './rebuild-request.js'
import { RunSettingsIndex } from './run-settings.js'
import { createRequestBuilder, type LoopRequestMarks, type RequestBuilder } from './request-builder.js'
import { TurnCheckpoints } from './turn-checkpoints.js'

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
  /** The session registry. */
  readonly sessions: SessionRegistry
  /** The durability checkpoints, raced against the turn signal. */
  readonly checkpoints: TurnCheckpoints
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
  /** The per-run settings of queued prompts (step limit, output contract). */
  readonly runSettings: RunSettingsIndex
  /**
   * Runs user code (tool calls, listeners) in the agent's initiator frame, for as long as it runs:
   * the loop's own work runs outside frames, so its promises pay no async-hook cost.
   */
  frame<T>(operation: () => T): T
}

/** What {@link createLoopHost} wires a host from. */
export interface LoopHostInit {
  /** The agent handle; its context, session and options are read from it. */
  readonly agent: Agent
  /** The agent's inbox. */
  readonly inbox: AgentInbox
  /** The agent's id source. */
  readonly ids: IdSource
  /** The harness's loop-request marks. */
  readonly marks: LoopRequestMarks
  /** The harness initiator. */
  readonly initiator: InitiatorControl<Agent>
}

/**
 * Wires the frozen host of an agent's turn and step runners: the services they call, the tool
 * settings and the agent's request builder.
 *
 * @param init - the agent, its inbox, its id source and the harness's marks
 * @returns the host
 */
export function createLoopHost(init: LoopHostInit): LoopHost {
  const { agent, inbox, ids, marks, initiator } = init
  const { ctx, session, options } = agent
  const sessions = ctx.get(SessionsKey)
  return Object.freeze({
    agent,
    ctx,
    session,
    toolOptions: toolOptionsOf(options),
    sessions,
    checkpoints: new TurnCheckpoints(sessions, session),
    systemPrompt: ctx.get(SystemPromptKey),
    projection: createRuntimeContextProjection({ session, ids }),
    ids,
    approvals: createApprovalBroker({ ctx, agent }),
    inbox,
    runSettings: new RunSettingsIndex(session, options),
    frame: <T>(operation: () => T): T => initiator.enter(agent, operation),
    requests: createRequestBuilder({
      session,
      options,
      models: ctx.get(ModelsKey),
      scope: agent,
      marks,
      verify:
        options.verifyReconstruction === true
          ? (request, attempt) => verifyReconstruction(request, session, attempt, marks)
          : undefined,
    }),
  })
}

function toolOptionsOf(options: AgentOptions): ToolRunOptions {
  return Object.freeze({
    maxParallelToolCalls: options.maxParallelToolCalls ?? defaultToolRunOptions.maxParallelToolCalls,
    toolAbortGraceMs: options.toolAbortGraceMs ?? defaultToolRunOptions.toolAbortGraceMs,
    toolResultMaxBytes: options.toolResultMaxBytes ?? defaultToolRunOptions.toolResultMaxBytes,
    approvalMode: options.approvalMode ?? defaultToolRunOptions.approvalMode,
    ...(options.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: options.toolTimeoutMs }),
    ...(options.toolResultSpill === 'meta' ? { toolResultSpill: 'meta' as const } : {}),
    ...(options.approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs: options.approvalTimeoutMs }),
  })
}
