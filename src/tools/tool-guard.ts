import type { ToolCallInfo } from './tool-call-info.js'

/**
 * A synchronous policy check run after pre-execute and approval allowed a call:
 * `undefined` lets the call through; any other value denies it (`TOOL_DENIED`, a string becomes
 * the message). A throw denies too. No later guard, listener or approval can re-allow it.
 */
export type ToolGuard = (call: ToolCallInfo) => string | undefined
