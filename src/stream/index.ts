/**
 * Typed event streams: the event union `agent.stream()` yields, session streams that resume from
 * a seq, the text of a run, and Server-Sent Events.
 *
 * @module
 */
export type {
  AgentStreamEvent,
  DeclaredEventType,
  SessionEventDataMap,
  TypedSessionEvent,
  UndeclaredEventType,
  UndeclaredSessionEvent,
} from './agent-stream-event.js'
export { type SessionSseOptions, type SseOptions, sseResponse } from './sse-response.js'
export {
  type SessionStream,
  type SessionOwner,
  type SessionStreamOptions,
  type SessionStreamSource,
  type SessionStreamUntil,
  streamSession,
} from './stream-session.js'
export { textStream } from './text-stream.js'
export { writeResponse } from './write-response.js'
