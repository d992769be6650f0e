import { PluginStartError, type RollbackError } from '../errors/plugin-start-error.js'
import { type Context, kernelOf } from '../kernel/context.js'
import { createRootContext } from '../kernel/create-root-context.js'
import { inspectKernel } from '../kernel/inspect.js'
import type { PluginRecord } from '../kernel/kernel-state.js'
import type { Plan } from '../kernel/plan-entries.js'
import { PresetsKey } from '../scope/presets-key.js'
import { PluginFailure, startPlugin } from '../kernel/start-plugin.js'
import { describePlan, prepareHarness } from './describe-harness.js'
import { composePresets, type PresetComposition } from '../scope/compose-presets.js'
import { createPresetRegistry } from '../scope/preset-registry.js'
import type { Harness } from './harness.js'
import type { HarnessOptions } from './harness-options.js'
import { RunningHarness } from './running-harness.js'

function recordsOf(plan: Plan, root: Context): PluginRecord<Context>[] {
  return plan.order.map(({ entry, plugin }, index) => ({
    id: entry.id,
    name: plugin.name,
    state: 'pending',
    startIndex: index,
    inject: plugin.inject,
    provides: plugin.provides,
    error: undefined,
    context: undefined,
    home: root,
  }))
}

/** Registers the entries' catalogs and starts every entry, rolling everything back on a failure. */
async function boot(root: Context, plan: Plan): Promise<void> {
  const kernel = kernelOf(root)
  try {
    for (const { plugin } of plan.order) for (const catalog of plugin.events) root.registerEvents(catalog)
  } catch (error) {
    await root.dispose()
    throw error
  }
  const records = recordsOf(plan, root)
  kernel.plugins.push(...records)
  const started: Context[] = []
  for (const [index, { entry, plugin }] of plan.order.entries()) {
    const record = records[index] as PluginRecord<Context>
    try {
      started.push(
        await startPlugin({
          parent: root,
          record,
          plugin,
          config: entry.config,
          label: entry.id,
          registerOwnEvents: false,
        }),
      )
    } catch (failure) {
      const rollbackErrors: RollbackError[] = []
      let cause: unknown = failure
      let inspection: unknown = inspectKernel(kernel)
      if (failure instanceof PluginFailure) {
        cause = failure.cause
        inspection = failure.inspection
        rollbackErrors.push(...failure.rollbackErrors)
      }
      for (const context of started.reverse()) rollbackErrors.push(...(await context.dispose()).errors)
      for (const rest of records.slice(index + 1)) kernel.setPluginState(rest, 'disposed')
      rollbackErrors.push(...(await root.dispose()).errors)
      throw new PluginStartError({ plugin: entry.id, pluginName: plugin.name, cause, rollbackErrors, inspection })
    }
  }
}

/**
 * Builds and starts a harness: validates the options, composes the default
 * bundle with `plugins` and `patches`, plans the start order, creates the root with the host
 * services, starts every enabled entry in order, then composes the presets. A failure rolls back
 * everything started.
 *
 * @param options - the harness options
 * @returns the running harness
 * @throws (as a rejection) {@link InvalidOptionsError} before anything is created;
 *   {@link CompositionError}, {@link UnknownEntryError}, {@link MissingServicesError},
 *   {@link ServiceConflictError}, {@link PluginCycleError} from planning; {@link EventConflictError};
 *   {@link PluginStartError} when an entry fails to start; {@link PresetSetupError} when a preset's
 *   plugins or setup fail (everything rolled back)
 * @example
 * ```ts
 * const harness = await createHarness({ plugins: [greeter], patches: [{ id: 'greeter', merge: { name: 'Ada' } }] })
 * await harness.close()
 * ```
 */
export async function createHarness(options?: HarnessOptions): Promise<Harness> {
  const { options: checked, plan } = prepareHarness(options)
  const root = createRootContext({
    ...(checked.logger === undefined ? {} : { logger: checked.logger }),
    ...(checked.clock === undefined ? {} : { clock: checked.clock }),
    ...(checked.ids === undefined ? {} : { ids: checked.ids }),
  })
  // Provided before any plugin starts, like the host services; filled when the presets are composed, after every entry started.
  const presetRegistry = createPresetRegistry()
  root.provide(PresetsKey, presetRegistry.registry)
  // `harness.on` listeners live in a context made before any plugin, so teardown (last in, first
  // out) removes them after every plugin stopped: they hear the shutdown.
  const listeners = root.child('listeners')
  await boot(root, plan)
  let presets: PresetComposition
  try {
    presets = await composePresets(root, checked.presets ?? [], presetRegistry)
  } catch (error) {
    await root.dispose()
    throw error
  }
  return new RunningHarness(root, listeners, presets, describePlan(plan))
}
