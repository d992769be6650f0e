import type { ScopeKey } from '../kernel/scope-graph.js'
import { defineEvents, type Emit, type EventCatalog, type Waterfall } from '../kernel/event-catalog.js'
import type { JsonValue } from '../session/json-value.js'
import type { ApprovalDecision } from './approval-broker.js'
import type { ToolAgent, ToolCallInfo } from './tool-call-info.js'
import type { ToolContext } from './tool-definition.js'
import type { ToolResult } from './tool-result.js'

/** Payload of `tools/change`: one per committed registry change. */
export interface ToolsChangePayload {
  /** The layer changed; `undefined` for the global layer. */
  readonly scope: ScopeKey | undefined
  /** What happened. */
  readonly kind: 'register' | 'unregister' | 'restrict' | 'unrestrict'
  /** The tool names concerned, sorted. */
  readonly names: readonly string[]
}

/** Payload of `tools/progress`. */
export interface ToolsProgressPayload {
  /** The calling agent. */
  readonly agent: ToolAgent
  /** The call. */
  readonly callId: string
  /** The tool. */
  readonly name: string
  /** What the body reported. */
  readonly progress: JsonValue
}

/** A `tools/pre-execute` decision; arguments cannot be rewritten. */
export type PreExecuteDecision =
  | {
      /** Continue (approval may still be asked when the tool's `needsApproval` says so). */
      readonly kind: 'allow'
    }
  | {
      /** Refuse the call (`TOOL_DENIED`). */
      readonly kind: 'deny'
      /** The denial message the model sees. */
      readonly reason?: string
    }
  | {
      /** Ask for approval. */
      readonly kind: 'ask'
      /** Why approval is asked. */
      readonly reason?: string
    }

/** Payload of `tools/pre-execute`. */
export interface ToolsPreExecutePayload {
  /** The call, frozen. */
  readonly call: ToolCallInfo
}

/**
 * Payload of `tools/execute` (wraps the body). A wrapper's `next()` always resolves: a body that
 * throws or returns a value that is not JSON gives the `TOOL_FAILED` error result.
 */
export interface ToolsExecutePayload {
  /** The call, frozen. */
  readonly call: ToolCallInfo
  /** The body's context. */
  readonly context: ToolContext
}

/** Payload of `tools/post-execute`. */
export interface ToolsPostExecutePayload {
  /** The call, frozen. */
  readonly call: ToolCallInfo
  /** The result so far, frozen. */
  readonly result: ToolResult
}

/** Payload of `tools/result`: a call's dispatch settled (completion order). */
export interface ToolsResultPayload {
  /** The calling agent. */
  readonly agent: ToolAgent
  /** The call, frozen. */
  readonly call: ToolCallInfo
  /** The dispatch outcome (before post-execute and truncation). */
  readonly result: ToolResult
  /** Milliseconds from dispatch to settlement (0 when it never dispatched). */
  readonly durationMs: number
}

/** Payload of `tools/abandoned`: a body ignored its aborted signal past the grace. */
export interface ToolsAbandonedPayload {
  /** The calling agent. */
  readonly agent: ToolAgent
  /** The call. */
  readonly callId: string
  /** The tool. */
  readonly name: string
}

/** Payload of `approval/request`. */
export interface ApprovalRequestPayload {
  /** The calling agent. */
  readonly agent: ToolAgent
  /** The approval id. */
  readonly approvalId: string
  /** The call, frozen. */
  readonly call: ToolCallInfo
  /** Why approval is asked. */
  readonly reason?: string
  /** Aborts when the request is cancelled or decided otherwise. */
  readonly signal: AbortSignal
}

/** The live events of the tool layer. */
export type ToolEvents = {
  /** A registry change was committed (listener throws are contained). */
  readonly 'tools/change': Emit<ToolsChangePayload>
  /** A tool body reported progress. */
  readonly 'tools/progress': Emit<ToolsProgressPayload>
  /** Policy before a call: allow, deny or ask (default allow). */
  readonly 'tools/pre-execute': Waterfall<ToolsPreExecutePayload, PreExecuteDecision>
  /** Middleware around the body. */
  readonly 'tools/execute': Waterfall<ToolsExecutePayload, ToolResult>
  /** Middleware on the result, in model order (monotonic). */
  readonly 'tools/post-execute': Waterfall<ToolsPostExecutePayload, ToolResult>
  /** A call's dispatch settled. */
  readonly 'tools/result': Emit<ToolsResultPayload>
  /** A body was abandoned after the abort grace. */
  readonly 'tools/abandoned': Emit<ToolsAbandonedPayload>
  /** Ask the host for an approval decision (default: no answer). */
  readonly 'approval/request': Waterfall<ApprovalRequestPayload, ApprovalDecision | undefined>
}

/** The catalog of {@link ToolEvents}, registered by the `tools` entry. */
export const toolEvents: EventCatalog<ToolEvents> = defineEvents<ToolEvents>({
  'tools/change': 'emit',
  'tools/progress': 'emit',
  'tools/pre-execute': 'waterfall',
  'tools/execute': 'waterfall',
  'tools/post-execute': 'waterfall',
  'tools/result': 'emit',
  'tools/abandoned': 'emit',
  'approval/request': 'waterfall',
})
