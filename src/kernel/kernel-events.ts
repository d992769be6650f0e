import { defineEvents, type Emit, type EventCatalog } from './event-catalog.js'

/** Where a contained failure happened. */
export type KernelErrorPhase = 'listener' | 'dispose' | 'effect-setup'

/** Payload of `kernel/error`. */
export interface KernelErrorEvent {
  /** What was thrown. */
  readonly error: unknown
  /** Where it was thrown. */
  readonly phase: KernelErrorPhase
  /** The event whose listener failed (phase `listener`). */
  readonly event?: string
  /** The effect label whose cleanup or setup failed. */
  readonly label?: string
  /** The path of the context concerned. */
  readonly context: string
  /** What the failed dispatch was about, when its dispatcher named it (e.g. a session id). */
  readonly subject?: string
}

/** A plugin's lifecycle state. */
export type PluginState = 'pending' | 'loading' | 'active' | 'failed' | 'disposing' | 'disposed'

/** Payload of `kernel/plugin-state`. */
export interface PluginStateEvent {
  /** The entry (or runtime plugin) id. */
  readonly id: string
  /** The plugin's name. */
  readonly name: string
  /** The new state. */
  readonly state: PluginState
  /** The state before. */
  readonly previous: PluginState
  /** The failure, when the new state is `failed`. */
  readonly error?: unknown
}

/** Payload of `kernel/service`. */
export interface ServiceEvent {
  /** The key name. */
  readonly key: string
  /** Whether the key was provided or withdrawn. */
  readonly kind: 'provided' | 'withdrawn'
  /** The owner of the providing context (`'harness'` for host services). */
  readonly owner: string
}

/** The kernel's own events. */
export type KernelEvents = {
  /** A contained failure: a listener, a cleanup or an async effect setup threw. */
  readonly 'kernel/error': Emit<KernelErrorEvent>
  /** A plugin changed state. */
  readonly 'kernel/plugin-state': Emit<PluginStateEvent>
  /** A service was provided or withdrawn. */
  readonly 'kernel/service': Emit<ServiceEvent>
}

/** The kernel's own catalog, registered on every root. */
export const kernelEvents: EventCatalog<KernelEvents> = defineEvents<KernelEvents>({
  'kernel/error': 'emit',
  'kernel/plugin-state': 'emit',
  'kernel/service': 'emit',
})
