import { MissingServicesError } from '../errors/missing-services-error.js'
import { PluginStartError } from '../errors/plugin-start-error.js'
import { type Context, kernelOf, providerOf } from './context.js'
import type { PluginRecord } from './kernel-state.js'
import { entryIdOf, normalizePlugin, type PluginHandle, type PluginInput } from './plugin.js'
import { PluginFailure, startPlugin } from './start-plugin.js'

/**
 * Starts a plugin at run time as an effect of `ctx` (01-kernel.md P11).
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
  const record: PluginRecord = {
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
