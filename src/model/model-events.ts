import { defineEvents, type Emit, type EventCatalog, type Waterfall } from '../kernel/event-catalog.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { StreamChunk } from '../session/stream-chunk.js'
import type { PreparedCall } from './model-registry.js'
import type { ModelRequest } from './model-request.js'

/** Payload of `llm/stream`: the request about to be streamed and, for a prepared call, that call. */
export interface LlmStreamPayload {
  /** The request, not yet validated (the innermost step validates it). */
  readonly request: ModelRequest
  /** The prepared call streaming it (`prepared.stream(request)`); absent for `models.stream`. */
  readonly prepared?: PreparedCall
}

/** Payload of `llm/adapters-change`: routes were added, swapped or removed. */
export interface LlmAdaptersChangePayload {
  /** The provider ids of the registration concerned. */
  readonly providers: readonly string[]
  /** The scope key of the layer concerned; absent for the global layer. */
  readonly scope?: ScopeKey
}

/** The live events of the `model` entry (08-models.md §5). */
export type ModelEvents = {
  /**
   * Wraps every model stream (dispatched with the call's `{ scope }`): middleware may observe,
   * wrap or replace the stream. The innermost step validates the request, calls the adapter and
   * applies the boundary rules; a middleware's own throw reaches the consumer unchanged.
   */
  readonly 'llm/stream': Waterfall<LlmStreamPayload, AsyncIterable<StreamChunk>>
  /** A registration was added, replaced or disposed (dispatched with its layer's `{ scope }`). */
  readonly 'llm/adapters-change': Emit<LlmAdaptersChangePayload>
}

/** The catalog of {@link ModelEvents}, registered by the `model` entry. */
export const modelEvents: EventCatalog<ModelEvents> = defineEvents<ModelEvents>({
  'llm/stream': 'waterfall',
  'llm/adapters-change': 'emit',
})
