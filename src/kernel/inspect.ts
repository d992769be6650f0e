import { type Context, effectRecordsOf, kernelOf, providerOf } from './context.js'
import type { EffectKind, EffectRecord } from './effect.js'
import type { EventMode } from './event-catalog.js'
import type { PluginState } from './kernel-events.js'
import type { KernelState } from './kernel-state.js'

/** A JSON-safe summary of an error. */
export interface ErrorSummary {
  /** The error's `name`. */
  readonly name: string
  /** Its stable code (`'UNKNOWN'` for errors without one). */
  readonly code: string
  /** Its message. */
  readonly message: string
  /** The summary of its `cause`, if any. */
  readonly cause?: ErrorSummary
}

/** One node of the effect tree. */
export interface EffectNode {
  /** The effect label: `plugin:<id>`, `service:<key>`, `listener:<event>`, `context:<label>`, `apply`, … */
  readonly label: string
  /** What the effect is. */
  readonly kind: EffectKind
  /** The effects of a context or plugin node, in registration order. */
  readonly children: readonly EffectNode[]
}

/** One plugin, as `inspect()` shows it. */
export interface PluginInspection {
  /** The entry (or runtime plugin) id. */
  readonly id: string
  /** The plugin's name. */
  readonly name: string
  /** Its state. */
  readonly state: PluginState
  /** Its position in the start order (`null` for runtime plugins). */
  readonly startIndex: number | null
  /** The keys it provides. */
  readonly provides: readonly string[]
  /** Required keys not provided right now. */
  readonly missing: readonly string[]
  /** Why it failed, when `state` is `failed`. */
  readonly error?: ErrorSummary
}

/** A provided service in an inspection. */
export interface ServiceInspection {
  /** The key name. */
  readonly key: string
  /** The owner (plugin id or `harness`) of the providing context. */
  readonly owner: string
}

/** A defined event in an inspection. */
export interface EventInspection {
  /** The event name. */
  readonly name: string
  /** Its dispatch mode. */
  readonly mode: EventMode
  /** How many listeners it has right now. */
  readonly listeners: number
}

/** A synchronous, JSON-safe snapshot of a harness's plugins, services, events and effects. */
export interface HarnessInspection {
  /** Every plugin: entries in start order, then runtime plugins. */
  readonly plugins: readonly PluginInspection[]
  /** Every provided service and the owner of its provider. */
  readonly services: readonly ServiceInspection[]
  /** Every defined event, its mode and its listener count. */
  readonly events: readonly EventInspection[]
  /** The root's effect tree. */
  readonly effects: EffectNode
}

/**
 * Summarizes an error as JSON-safe data (name, code, message, cause chain up to 8 deep).
 *
 * @param error - anything thrown
 * @param depth - how deep in a cause chain this error is (internal recursion)
 * @returns the summary
 */
export function summarizeError(error: unknown, depth = 0): ErrorSummary {
  if (!(error instanceof Error) && (typeof error !== 'object' || error === null)) {
    return { name: 'Error', code: 'UNKNOWN', message: String(error) }
  }
  const candidate = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown }
  const summary: { name: string; code: string; message: string; cause?: ErrorSummary } = {
    name: typeof candidate.name === 'string' ? candidate.name : 'Error',
    code: typeof candidate.code === 'string' ? candidate.code : 'UNKNOWN',
    message: typeof candidate.message === 'string' ? candidate.message : String(error),
  }
  if (candidate.cause !== undefined && depth < 8) summary.cause = summarizeError(candidate.cause, depth + 1)
  return summary
}

function nodeOf(record: EffectRecord): EffectNode {
  const children = record.inspectChildren?.() ?? []
  return { label: record.label, kind: record.kind, children: children.map(nodeOf) }
}

/** @internal The inspection of the whole tree a kernel state belongs to. */
export function inspectKernel(kernel: KernelState<Context>): HarnessInspection {
  const plugins = kernel.plugins.map((record): PluginInspection => {
    const missing = record.inject.filter((key) => providerOf(record.home, key) === undefined)
    const base = {
      id: record.id,
      name: record.name,
      state: record.state,
      startIndex: record.startIndex,
      provides: [...record.provides],
      missing,
    }
    return record.state === 'failed' ? { ...base, error: summarizeError(record.error) } : base
  })
  const services: { key: string; owner: string }[] = []
  for (const realm of kernel.realms) {
    for (const provider of realm.providers.values()) services.push({ key: provider.key, owner: provider.context.owner })
  }
  return {
    plugins,
    services,
    events: kernel.bus.describe(),
    effects: { label: 'harness', kind: 'context', children: effectRecordsOf(kernel.root).map(nodeOf) },
  }
}

/**
 * Inspects the harness tree that `ctx` belongs to (what `harness.inspect()` returns). Synchronous,
 * JSON-safe, O(live effects).
 *
 * @param ctx - any context of the tree
 * @returns the inspection
 * @example
 * ```ts
 * const root = createRootContext()
 * console.log(inspectContext(root).services) // clock, ids, logger
 * ```
 */
export function inspectContext(ctx: Context): HarnessInspection {
  return inspectKernel(kernelOf(ctx))
}
