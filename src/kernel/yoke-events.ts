import type { LlmAdaptersChangePayload, LlmStreamPayload } from '../model/model-events.js'
import type { RequestErrorPayload, RequestErrorResult } from '../model/retry/retry-events.js'
import type { SessionWriteFailedPayload } from '../persistence/persistence-events.js'
import type { SessionEventPayload, SessionLifecyclePayload } from '../session/session-events.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { Emit, Parallel, Waterfall } from './event-catalog.js'
import type { KernelErrorEvent, PluginStateEvent, ServiceEvent } from './kernel-events.js'

/**
 * The map of every typed event name to its descriptor. Plugins add their events by declaration
 * merging (`declare module 'yoke' { interface YokeEvents { … } }`); a wrong-mode dispatch then
 * fails to compile.
 */
export interface YokeEvents {
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
  'session/disposed': Parallel<SessionLifecyclePayload>
  /** A background write of a session failed (the `persistence` entry). */
  'session/write-failed': Emit<SessionWriteFailedPayload>
  /** Middleware around every model stream (the `model` entry, 08-models.md §5). */
  'llm/stream': Waterfall<LlmStreamPayload, AsyncIterable<StreamChunk>>
  /** A model registration was added, replaced or disposed (the `model` entry). */
  'llm/adapters-change': Emit<LlmAdaptersChangePayload>
  /** A model attempt failed (04-agent.md T16); `{ kind: 'retry' }` re-requests in the same step (the `retry` entry). */
  'agent/request-error': Waterfall<RequestErrorPayload, RequestErrorResult>
}
