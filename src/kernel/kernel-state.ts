import { EventBus } from './event-bus.js'
import type { Clock, IdSource, Logger } from './host-services.js'
import type { KernelErrorEvent, PluginState } from './kernel-events.js'
import { ScopeStore } from './scope-graph.js'

/**
 * @internal One provided service. The records are generic in the context type `C` (the kernel's
 * `Context`), so this shared state does not import the class that holds it.
 */
export interface ProviderRecord<C> {
  readonly key: string
  readonly value: unknown
  readonly context: C
  readonly bindable: boolean
}

/** @internal A realm: where provides of some keys land and where gets of them resolve. */
export class ServiceRealm<C> {
  readonly providers = new Map<string, ProviderRecord<C>>()
  readonly parent: ServiceRealm<C> | undefined
  readonly isolated: ReadonlySet<string> | undefined

  constructor(parent: ServiceRealm<C> | undefined, isolated: ReadonlySet<string> | undefined) {
    this.parent = parent
    this.isolated = isolated
  }

  /** The realm that owns `key` for contexts of this realm. */
  resolve(key: string): ServiceRealm<C> {
    let realm: ServiceRealm<C> = this
    while (realm.isolated !== undefined && !realm.isolated.has(key) && realm.parent !== undefined) realm = realm.parent
    return realm
  }
}

/** @internal A started (or failed) plugin, for state events and `inspect()`. */
export interface PluginRecord<C> {
  readonly id: string
  readonly name: string
  state: PluginState
  readonly startIndex: number | null
  readonly inject: readonly string[]
  readonly provides: readonly string[]
  error: unknown
  context: C | undefined
  /** The context whose realm the plugin's keys resolve in (its own once created). */
  home: C
}

/** @internal Everything one root shares with its descendants. */
export class KernelState<C> {
  readonly bus: EventBus
  readonly scopes = new ScopeStore()
  readonly realms = new Set<ServiceRealm<C>>()
  readonly plugins: PluginRecord<C>[] = []
  readonly logger: Logger
  readonly clock: Clock
  readonly ids: IdSource
  /** The root context, set right after it is built. */
  root!: C

  constructor(host: { logger: Logger; clock: Clock; ids: IdSource }) {
    this.logger = host.logger
    this.clock = host.clock
    this.ids = host.ids
    this.bus = new EventBus((name, error, record, subject) => {
      if (name === 'kernel/error') {
        this.#log('a kernel/error listener failed', { error, context: record.home.path })
        return
      }
      this.report({
        error,
        phase: 'listener',
        event: name,
        context: record.home.path,
        ...(subject === undefined ? {} : { subject }),
      })
    })
  }

  /** Reports a contained failure to `kernel/error` and the logger, once. */
  report(event: KernelErrorEvent): void {
    const where = [event.event ?? event.label ?? event.context, event.subject]
      .filter((part) => part !== undefined)
      .join(', ')
    this.#log(`${event.phase} failed (${where}): ${messageOf(event.error)}`, { ...event })
    if (this.bus.isDefined('kernel/error')) this.bus.emit('kernel/error', event, undefined)
  }

  /** Emits a kernel event if the kernel catalog is still registered. */
  emitKernel(name: 'kernel/plugin-state' | 'kernel/service', payload: unknown): void {
    if (this.bus.isDefined(name)) this.bus.emit(name, payload, undefined)
  }

  /** Moves a plugin to a new state and emits `kernel/plugin-state`. */
  setPluginState(record: PluginRecord<C>, state: PluginState, error?: unknown): void {
    const previous = record.state
    record.state = state
    if (state === 'failed') record.error = error
    const payload =
      state === 'failed'
        ? { id: record.id, name: record.name, state, previous, error }
        : { id: record.id, name: record.name, state, previous }
    this.emitKernel('kernel/plugin-state', payload)
  }

  #log(message: string, fields: Record<string, unknown>): void {
    try {
      this.logger.error(message, fields)
    } catch {
      // A logger must not throw; if it does, there is nowhere left to report to.
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
