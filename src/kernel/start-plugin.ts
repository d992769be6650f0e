import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ValidationIssue } from '../errors/issue.js'
import { PluginConfigError } from '../errors/plugin-config-error.js'
import type { RollbackError } from '../errors/plugin-start-error.js'
import { ServiceMissingError } from '../errors/service-missing-error.js'
import { type Context, kernelOf, providerOf, spawnContext } from './context.js'
import type { Cleanup } from './effect.js'
import { inspectKernel } from './inspect.js'
import type { PluginRecord } from './kernel-state.js'
import type { NormalizedPlugin } from './plugin.js'

/** @internal Why a plugin start failed, with what the rollback met and the inspection taken before it. */
export class PluginFailure {
  readonly cause: unknown
  readonly rollbackErrors: readonly RollbackError[]
  readonly inspection: unknown

  constructor(cause: unknown, rollbackErrors: readonly RollbackError[], inspection: unknown) {
    this.cause = cause
    this.rollbackErrors = rollbackErrors
    this.inspection = inspection
  }
}

/** @internal What {@link startPlugin} needs. */
export interface StartSpec {
  readonly parent: Context
  readonly record: PluginRecord<Context>
  readonly plugin: NormalizedPlugin
  readonly config: unknown
  readonly label: string
  /** Register the plugin's own event catalogs on its context (runtime plugins; entries' are on the root). */
  readonly registerOwnEvents: boolean
  readonly onDisposed?: () => void
}

function issuesOf(error: unknown): ValidationIssue[] {
  const issues =
    (
      error as {
        issues?: readonly { code?: string; keys?: readonly string[]; path: readonly PropertyKey[]; message: string }[]
      }
    ).issues ?? []
  return issues.flatMap((issue) => {
    const path = issue.path.map((part) => (typeof part === 'number' ? part : String(part)))
    // A strict object's unknown keys: one issue per key, at the key (as for the harness options).
    if (issue.code === 'unrecognized_keys' && issue.keys !== undefined && issue.keys.length > 0) {
      return issue.keys.map((key) => ({ path: [...path, key], message: 'unknown option' }))
    }
    return [{ path, message: issue.message }]
  })
}

/**
 * Starts one plugin: `loading`, config, context, `apply`, its cleanup as the last
 * effect, the `provides` check, `active`. On failure the plugin's context is rolled back, the
 * state becomes `failed`, and a {@link PluginFailure} is thrown.
 *
 * @internal
 */
export async function startPlugin(spec: StartSpec): Promise<Context> {
  const { record, plugin } = spec
  const kernel = kernelOf(spec.parent)
  kernel.setPluginState(record, 'loading')
  let context: Context | undefined
  try {
    let config = spec.config
    if (plugin.config !== undefined) {
      const parsed = await plugin.config.safeParseAsync(spec.config)
      if (!parsed.success) throw new PluginConfigError({ plugin: record.id, issues: issuesOf(parsed.error) })
      config = parsed.data
    }
    context = spawnContext(spec.parent, {
      label: spec.label,
      effectLabel: `plugin:${record.id}`,
      kind: 'plugin',
      owner: record.id,
      scope: spec.parent.scope,
      isolate: undefined,
      onDisposing: () => {
        if (record.state === 'active') kernel.setPluginState(record, 'disposing')
      },
      onDisposed: () => {
        if (record.state === 'disposing') kernel.setPluginState(record, 'disposed')
        spec.onDisposed?.()
      },
    })
    record.context = context
    record.home = context
    if (spec.registerOwnEvents) for (const catalog of plugin.events) context.registerEvents(catalog)
    const result: unknown = await plugin.start(context, config)
    if (typeof result === 'function') context.effect(() => result as Cleanup, 'apply')
    else if (result !== undefined) {
      throw new InvalidArgumentError({
        argument: 'apply result',
        reason: `apply of "${record.id}" must return nothing or a cleanup function`,
        value: result,
      })
    }
    for (const key of plugin.provides) {
      if (providerOf(context, key) === undefined) {
        throw new ServiceMissingError({ key, requestedBy: context.path, owner: record.id })
      }
    }
    kernel.setPluginState(record, 'active')
    return context
  } catch (cause) {
    // The inspection shows this plugin failed (with its error): it is taken before the rollback.
    kernel.setPluginState(record, 'failed', cause)
    const inspection = inspectKernel(kernel)
    const rollbackErrors = context === undefined ? [] : (await context.dispose()).errors
    throw new PluginFailure(cause, rollbackErrors, inspection)
  }
}
