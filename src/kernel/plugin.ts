import type { ZodType } from 'zod'
import { InvalidPluginError } from '../errors/invalid-plugin-error.js'
import type { Context } from './context.js'
import type { Cleanup } from './effect.js'
import { type EventCatalog, isEventCatalog } from './event-catalog.js'
import { isServiceKey, keyNameOf, type ServiceKey } from './service-key.js'

/** A key or a key name, as plugin key lists accept them. */
export type KeyReference = ServiceKey<unknown> | string

/** What a plugin's `apply` may return: nothing, a cleanup, or a promise of either. */
export type PluginApplyResult = void | Cleanup | Promise<void | Cleanup>

/** The object form of a plugin, as passed to {@link definePlugin}. */
export interface PluginSpec<C = undefined> {
  /** The plugin's name; its entry id is the name in kebab case. */
  readonly name: string
  /** Required service keys: planning fails if nothing provides them, and the plugin starts after their providers. */
  readonly inject?: readonly KeyReference[]
  /** Optional keys: the plugin starts after their providers when those are enabled. */
  readonly optional?: readonly KeyReference[]
  /** Keys this plugin provides in `apply`; checked once `apply` settles. */
  readonly provides?: readonly KeyReference[]
  /** Event catalogs registered before any plugin applies. */
  readonly events?: readonly EventCatalog[]
  /** A zod schema for the entry's config, parsed (async) before `apply`. */
  readonly config?: ZodType<C>
  /**
   * Starts the plugin. Register everything through `ctx` (effects, services, listeners) so that
   * disposing the plugin undoes it. May throw or reject: the start fails and is rolled back.
   */
  apply(ctx: Context, config: C): PluginApplyResult
}

/** A validated, frozen plugin definition (from {@link definePlugin}). */
export interface PluginDefinition<C = undefined> {
  /** The plugin's name. */
  readonly name: string
  /** Required key names. */
  readonly inject: readonly string[]
  /** Optional key names. */
  readonly optional: readonly string[]
  /** Provided key names. */
  readonly provides: readonly string[]
  /** Event catalogs. */
  readonly events: readonly EventCatalog[]
  /** The config schema, if any. */
  readonly config: ZodType<C> | undefined
  /** Starts the plugin. */
  apply(ctx: Context, config: C): PluginApplyResult
}

/** The static fields a plugin class may declare, besides its config schema. */
export interface PluginClassStatics {
  /** The plugin name; the class name by default. */
  readonly pluginName?: string
  /** Required keys. */
  readonly inject?: readonly KeyReference[]
  /** Optional keys. */
  readonly optional?: readonly KeyReference[]
  /** Provided keys. */
  readonly provides?: readonly KeyReference[]
  /** Event catalogs. */
  readonly events?: readonly EventCatalog[]
}

/** What a plugin class constructs. */
export interface PluginInstance<C> {
  /** Starts the plugin, like {@link PluginSpec.apply}. */
  apply(ctx: Context, config: C): PluginApplyResult
}

/** The class form of a plugin (the seed's shape): `new Class(ctx, config)`, then `instance.apply(ctx, config)`. */
export interface PluginClass<C = unknown> extends PluginClassStatics {
  /** Constructs the instance. */
  new (ctx: Context, config: C): PluginInstance<C>
  /** The config schema. */
  readonly config?: ZodType<C>
}

/**
 * A plugin class of any config type, as {@link PluginInput} accepts it: the constructor takes
 * whatever the class's own schema parses.
 */
export interface AnyPluginClass extends PluginClassStatics {
  /** Constructs the instance. */
  new (ctx: Context, config: never): PluginInstance<never>
  /** The config schema. */
  readonly config?: ZodType<unknown>
}

/** Anything accepted where a plugin is expected: a definition or a class. */
export type PluginInput = PluginDefinition<unknown> | AnyPluginClass

/** A plugin started at run time by `ctx.plugin()`. */
export interface PluginHandle {
  /** `<owner>/<name>`, with `#n` on repeats. */
  readonly id: string
  /** The plugin's current state. */
  readonly state: import('./kernel-events.js').PluginState
  /** Stops the plugin (idempotent). */
  dispose(): Promise<void>
}

/** @internal A plugin in the one shape the kernel starts. */
export interface NormalizedPlugin {
  readonly name: string
  readonly inject: readonly string[]
  readonly optional: readonly string[]
  readonly provides: readonly string[]
  readonly events: readonly EventCatalog[]
  readonly config: ZodType<unknown> | undefined
  start(ctx: Context, config: unknown): PluginApplyResult
}

const definitionBrand = Symbol.for('yoke.pluginDefinition')

function keyList(plugin: string, field: string, value: unknown): readonly string[] {
  if (value === undefined) return Object.freeze([])
  if (!Array.isArray(value))
    throw new InvalidPluginError({ plugin, field, reason: 'must be an array of keys or key names' })
  return Object.freeze(
    value.map((key: unknown) => {
      if (typeof key !== 'string' && !isServiceKey(key)) {
        throw new InvalidPluginError({ plugin, field, reason: 'entries must be service keys or key names' })
      }
      try {
        return keyNameOf(key)
      } catch {
        throw new InvalidPluginError({ plugin, field, reason: `${JSON.stringify(key)} is not a valid key name` })
      }
    }),
  )
}

function catalogList(plugin: string, value: unknown): readonly EventCatalog[] {
  if (value === undefined) return Object.freeze([])
  if (!Array.isArray(value) || !value.every(isEventCatalog)) {
    throw new InvalidPluginError({ plugin, field: 'events', reason: 'must be an array of defineEvents() catalogs' })
  }
  return Object.freeze([...value])
}

function schemaOf(plugin: string, value: unknown): ZodType<unknown> | undefined {
  if (value === undefined) return undefined
  const candidate = value as { safeParseAsync?: unknown }
  if (typeof value !== 'object' || value === null || typeof candidate.safeParseAsync !== 'function') {
    throw new InvalidPluginError({ plugin, field: 'config', reason: 'must be a zod schema' })
  }
  return value as ZodType<unknown>
}

/**
 * Declares a plugin: validates and freezes the definition. Starting it is the harness's job.
 *
 * @param spec - the plugin's name, keys, events, config schema and `apply`
 * @returns the frozen definition
 * @throws {@link InvalidPluginError} naming the bad field
 * @example
 * ```ts
 * const Ledger = defineService<Ledger>('acme/ledger')
 * const ledger = definePlugin({
 *   name: 'ledger',
 *   provides: [Ledger],
 *   config: z.object({ currency: z.string().default('EUR') }),
 *   apply(ctx, config) { ctx.provide(Ledger, createLedger(config.currency)) },
 * })
 * const harness = await createHarness({ plugins: [ledger] })
 * ```
 */
export function definePlugin<C = undefined>(spec: PluginSpec<C>): PluginDefinition<C> {
  if (typeof spec !== 'object' || spec === null) {
    throw new InvalidPluginError({ plugin: '', field: 'definition', reason: 'must be an object' })
  }
  const name: unknown = spec.name
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidPluginError({ plugin: '', field: 'name', reason: 'must be a non-empty string' })
  }
  if (typeof spec.apply !== 'function') {
    throw new InvalidPluginError({ plugin: name, field: 'apply', reason: 'must be a function' })
  }
  const definition = {
    name,
    inject: keyList(name, 'inject', spec.inject),
    optional: keyList(name, 'optional', spec.optional),
    provides: keyList(name, 'provides', spec.provides),
    events: catalogList(name, spec.events),
    config: schemaOf(name, spec.config) as ZodType<C> | undefined,
    apply: spec.apply,
  }
  Object.defineProperty(definition, definitionBrand, { value: true })
  return Object.freeze(definition)
}

/** Whether `value` is a definition made by {@link definePlugin} (any copy of Yoke). */
export function isPluginDefinition(value: unknown): value is PluginDefinition<unknown> {
  return typeof value === 'object' && value !== null && definitionBrand in value
}

/** Whether `value` looks like the class form: a function whose prototype has `apply`. */
export function isPluginClass(value: unknown): value is AnyPluginClass {
  return (
    typeof value === 'function' && typeof (value as { prototype?: { apply?: unknown } }).prototype?.apply === 'function'
  )
}

/** The name a function given as a plugin class goes by (its `pluginName`, else its `name`), `''` when unreadable. */
function classNameOf(input: object): string {
  try {
    const name: unknown = Object.hasOwn(input, 'pluginName')
      ? (input as { pluginName?: unknown }).pluginName
      : (input as { name?: unknown }).name
    return typeof name === 'string' ? name : ''
  } catch {
    return ''
  }
}

/**
 * Brings a definition or a class into the one shape the kernel starts. Reads statics only; runs no plugin code.
 *
 * @internal
 */
export function normalizePlugin(input: unknown): NormalizedPlugin {
  if (isPluginDefinition(input)) {
    const definition = input
    return {
      name: definition.name,
      inject: definition.inject,
      optional: definition.optional,
      provides: definition.provides,
      events: definition.events,
      config: definition.config,
      start: (ctx, config) => definition.apply(ctx, config),
    }
  }
  if (isPluginClass(input)) {
    const pluginClass = input
    const name: unknown = Object.hasOwn(pluginClass, 'pluginName') ? pluginClass.pluginName : pluginClass.name
    if (typeof name !== 'string' || name.length === 0) {
      throw new InvalidPluginError({
        plugin: '',
        field: 'name',
        reason: 'a plugin class needs a name (static pluginName)',
      })
    }
    return {
      name,
      inject: keyList(name, 'inject', pluginClass.inject),
      optional: keyList(name, 'optional', pluginClass.optional),
      provides: keyList(name, 'provides', pluginClass.provides),
      events: catalogList(name, pluginClass.events),
      config: schemaOf(name, pluginClass.config),
      // The config was parsed by the class's own schema (or is the entry's raw config when it has none).
      start: (ctx, config) => new pluginClass(ctx, config as never).apply(ctx, config as never),
    }
  }
  if (typeof input === 'object' && input !== null && 'apply' in input) {
    return normalizePlugin(definePlugin(input as PluginSpec<unknown>))
  }
  if (typeof input === 'function') {
    // A function is meant as the class form; its missing `apply` is the problem, as for the object form.
    throw new InvalidPluginError({
      plugin: classNameOf(input),
      field: 'apply',
      reason: 'a plugin class must have an apply method on its prototype',
    })
  }
  throw new InvalidPluginError({
    plugin: '',
    field: 'definition',
    reason: 'expected a definePlugin() definition or a class with an apply method',
  })
}

/**
 * The entry id of a plugin name: kebab case (`ExamplePlugin` → `example-plugin`).
 *
 * @internal
 */
export function entryIdOf(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}

// The context knows nothing of plugins (these types name it), so the method that starts one at run
// time is declared here, next to the types it takes, and merged into `Context` by the package's
// name; `addPluginMethod` in runtime-plugin.ts installs it.
declare module 'yoke' {
  interface Context {
    /**
     * Starts a plugin at run time as an effect of this context (id `<owner>/<name>`).
     *
     * @param definition - a plugin definition or class
     * @param config - its config, parsed by the plugin's schema
     * @returns a handle once the plugin is active
     * @throws {@link MissingServicesError} at once for required keys missing in this realm;
     *   {@link PluginStartError}; {@link ContextDisposedError} once disposal began
     */
    plugin(definition: PluginInput, config?: unknown): Promise<PluginHandle>
  }
}
