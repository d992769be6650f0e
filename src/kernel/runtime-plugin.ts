import { MissingServicesError } from '../errors/missing-services-error.js'
import { PluginStartError } from '../errors/plugin-start-error.js'
import { ContextDisposedError } from '../errors/context-disposed-error.js'
import { Context, kernelOf, providerOf } from './context.js'
import type { PluginRecord } from './kernel-state.js'
import { entryIdOf, normalizePlugin, type PluginHandle, type PluginInput } from './plugin.js'
import { PluginFailure, startPlugin } from './start-plugin.js'

/**
 * Starts a plugin at run time as an effect of `ctx`.
 *
 * @internal
 */
export async function startRuntimePlugin(ctx: Context, input: PluginInput, config: unknown): Promise<PluginHandle> {
  const plugin = normalizePlugin(input)
  const kernel = kernelOf(ctx)
  const label = entryIdOf(plugin.name) || 'plugin'
  const base = `${ctx.owner}/${label}`
  let id = base
  for (let n = 2; kernel.plugins.some((existing) => existing.id === id); n++) id = `${base}#${n}`
  const missing = plugin.inject.filter((key) => providerOf(ctx, key) === undefined).map((key) => ({ plugin: id, key }))
  if (missing.length > 0) throw new MissingServicesError({ missing })
  const record: PluginRecord<Context> = {
    id,
    name: plugin.name,
    state: 'pending',
    startIndex: null,
    inject: plugin.inject,
    provides: plugin.provides,
    error: undefined,
    context: undefined,
    home: ctx,
  }
  kernel.plugins.push(record)
  const forget = (): void => {
    const index = kernel.plugins.indexOf(record)
    if (index >= 0) kernel.plugins.splice(index, 1)
  }
  let context: Context
  try {
    context = await startPlugin({
      parent: ctx,
      record,
      plugin,
      config,
      label,
      registerOwnEvents: true,
      onDisposed: forget,
    })
  } catch (failure) {
    forget()
    if (!(failure instanceof PluginFailure)) throw failure
    throw new PluginStartError({
      plugin: id,
      pluginName: plugin.name,
      cause: failure.cause,
      rollbackErrors: failure.rollbackErrors,
      inspection: failure.inspection,
    })
  }
  return Object.freeze({
    id,
    get state() {
      return record.state
    },
    dispose: async () => {
      await context.dispose()
    },
  })
}

/**
 * Gives every context its `plugin()` method (declared on `Context` next to the plugin types): the
 * context itself knows nothing of plugins, whose types name the context, so starting one at run
 * time is added on top of it. `createRootContext` calls this; calling it again changes nothing.
 *
 * @internal
 */
export function addPluginMethod(): void {
  Object.defineProperty(Context.prototype, 'plugin', {
    value: function plugin(this: Context, definition: PluginInput, config?: unknown): Promise<PluginHandle> {
      if (this.state !== 'active') {
        return Promise.reject(new ContextDisposedError({ context: this.path, operation: 'plugin' }))
      }
      return startRuntimePlugin(this, definition, config)
    },
    writable: true,
    configurable: true,
  })
}
