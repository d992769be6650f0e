import type { InboxClaimedPayload, InboxMessagePayload } from '../agent/agent-events.js'
import type {
  AgentErrorPayload,
  AgentLifecyclePayload,
  AgentRequestPayload,
  AgentSessionStartPayload,
  AgentStatusPayload,
  PreStepDecision,
  PreStepPayload,
  TurnStoppingPayload,
} from '../agent/agent-loop-events.js'
import type { CallConfigSeed } from '../agent/resolve-call-config.js'
import type { AgentCompactionPayload } from '../compaction/compaction-events.js'
import type { LlmAdaptersChangePayload, LlmStreamPayload } from '../model/model-events.js'
import type { RequestErrorPayload, RequestErrorResult } from '../model/retry/retry-events.js'
import type { SessionWriteFailedPayload } from '../persistence/persistence-events.js'
import type { PromptAssembly } from '../prompt/prompt-assembly.js'
import type { SystemPromptAssemblePayload, SystemPromptChangePayload } from '../prompt/prompt-events.js'
import type { SessionDisposedPayload, SessionEventPayload, SessionLifecyclePayload } from '../session/session-events.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { ApprovalDecision } from '../tools/approval-broker.js'
import type {
  ApprovalRequestPayload,
  PreExecuteDecision,
  ToolsAbandonedPayload,
  ToolsChangePayload,
  ToolsExecutePayload,
  ToolsPostExecutePayload,
  ToolsPreExecutePayload,
  ToolsProgressPayload,
  ToolsResultPayload,
} from '../tools/tool-events.js'
import type { ToolResult } from '../tools/tool-result.js'
import type { Emit, Parallel, Serial, Waterfall } from './event-catalog.js'
import type { KernelErrorEvent, PluginStateEvent, ServiceEvent } from './kernel-events.js'

/**
 * The map of every typed event name to its descriptor. Plugins add their events by declaration
 * merging (`declare module 'yoke' { interface YokeEvents { … } }`); a wrong-mode dispatch then
 * fails to compile.
 */
export interface YokeEvents {
  /** A compaction trigger skipped, an action failed, or pressure stayed over the limit (07-compaction.md §9). */
  'agent/compaction': Emit<AgentCompactionPayload>
  /** A contained failure: a listener, a cleanup or an async effect setup failed. */
  'kernel/error': Emit<KernelErrorEvent>
  /** A plugin changed state. */
  'kernel/plugin-state': Emit<PluginStateEvent>
  /** A service was provided or withdrawn. */
  'kernel/service': Emit<ServiceEvent>
  /** A session was created; a synchronous throw vetoes it. */
  'session/created': Emit<SessionLifecyclePayload>
  /** A session committed an event. */
  'session/event': Emit<SessionEventPayload>
  /** A flush barrier for one session. */
  'session/flush': Parallel<SessionLifecyclePayload>
  /** A session was disposed. */
  'session/disposed': Parallel<SessionDisposedPayload>
  /** A background write of a session failed (the `persistence` entry). */
  'session/write-failed': Emit<SessionWriteFailedPayload>
  /** Middleware around every model stream (the `model` entry, 08-models.md §5). */
  'llm/stream': Waterfall<LlmStreamPayload, AsyncIterable<StreamChunk>>
  /** A model registration was added, replaced or disposed (the `model` entry). */
  'llm/adapters-change': Emit<LlmAdaptersChangePayload>
  /** A model attempt failed (04-agent.md T16); `{ kind: 'retry' }` re-requests in the same step (the `retry` entry). */
  'agent/request-error': Waterfall<RequestErrorPayload, RequestErrorResult>
  /** A tool registry change was committed (the `tools` entry, 05-tools.md §2). */
  'tools/change': Emit<ToolsChangePayload>
  /** A tool body reported progress. */
  'tools/progress': Emit<ToolsProgressPayload>
  /** Policy before a tool call: allow, deny or ask. */
  'tools/pre-execute': Waterfall<ToolsPreExecutePayload, PreExecuteDecision>
  /** Middleware around a tool body. */
  'tools/execute': Waterfall<ToolsExecutePayload, ToolResult>
  /** Middleware on a tool result, in model order. */
  'tools/post-execute': Waterfall<ToolsPostExecutePayload, ToolResult>
  /** A tool call's dispatch settled (completion order). */
  'tools/result': Emit<ToolsResultPayload>
  /** A tool body was abandoned after the abort grace. */
  'tools/abandoned': Emit<ToolsAbandonedPayload>
  /** Ask the host for a tool approval decision. */
  'approval/request': Waterfall<ApprovalRequestPayload, ApprovalDecision | undefined>
  /** A system-prompt contribution was added or removed (the `system-prompt` entry, 06-prompt-scope.md §1.2). */
  'system-prompt/change': Emit<SystemPromptChangePayload>
  /** Middleware over every prompt assembly (the `system-prompt` entry, 06-prompt-scope.md §1.3). */
  'system-prompt/assemble': Waterfall<SystemPromptAssemblePayload, PromptAssembly>
  /** A message was queued in an agent's inbox (04-agent.md §5). */
  'agent/inbox/inserted': Emit<InboxMessagePayload>
  /** A pending inbox message was removed, replaced or cleared (04-agent.md §5). */
  'agent/inbox/discarded': Emit<InboxMessagePayload>
  /** A turn claimed a pending inbox message (04-agent.md §5). */
  'agent/inbox/claimed': Emit<InboxClaimedPayload>
  /** An agent's derived status changed (04-agent.md §3). */
  'agent/status': Emit<AgentStatusPayload>
  /** What enters the step about to open (04-agent.md T7). */
  'agent/pre-step': Waterfall<PreStepPayload, PreStepDecision>
  /** The call config of an attempt (04-agent.md T12). */
  'agent/request': Waterfall<AgentRequestPayload, Readonly<CallConfigSeed>>
  /** A turn is about to close (04-agent.md T20). */
  'agent/turn-stopping': Serial<TurnStoppingPayload, unknown>
  /** A turn failed (04-agent.md T22). */
  'agent/error': Emit<AgentErrorPayload>
  /** An agent was published (04-agent.md §13.2). */
  'agent/created': Emit<AgentLifecyclePayload>
  /** A published agent starts driving its session (04-agent.md §13.2). */
  'agent/session-start': Emit<AgentSessionStartPayload>
  /** An agent left the registry (04-agent.md §13.3). */
  'agent/disposed': Emit<AgentLifecyclePayload>
}
