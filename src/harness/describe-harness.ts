import type { ComposedEntry } from '../kernel/compose-layers.js'
import { describeConfig } from '../kernel/describe-config.js'
import { type Plan, planEntries } from '../kernel/plan-entries.js'
import { harnessRootKeys } from './services.js'
import { composeCheckedEntries } from './compose-entries.js'
import { type HarnessOptions, validateHarnessOptions } from './harness-options.js'

/** One entry of a {@link HarnessDescription}. */
export interface DescribedEntry {
  /** The entry id. */
  readonly id: string
  /** The plugin's name. */
  readonly name: string
  /** Which layer added it: `'default'`, `'plugins[i]'`, `'patches[j]'`. */
  readonly source: string
  /** The patches that changed it. */
  readonly patchedBy: readonly string[]
  /** Whether it is disabled. */
  readonly disabled: boolean
  /** Its config, JSON-safe (functions, instances and secrets rendered as strings); absent when none. */
  readonly config?: unknown
  /** Required key names. */
  readonly inject: readonly string[]
  /** Optional key names. */
  readonly optional: readonly string[]
  /** Provided key names. */
  readonly provides: readonly string[]
  /** Its position in the start order; `null` when disabled. */
  readonly startIndex: number | null
}

/** What a harness is made of: every composed entry with its provenance and start position. */
export interface HarnessDescription {
  /** The entries in composition order. */
  readonly entries: readonly DescribedEntry[]
}

/** @internal The first steps of booting a harness, which run no plugin code and do no I/O: validate, compose, plan. */
export function prepareHarness(options: unknown): {
  options: HarnessOptions
  composed: readonly ComposedEntry[]
  plan: Plan
} {
  const checked = validateHarnessOptions(options)
  const composed = composeCheckedEntries(checked)
  return { options: checked, composed, plan: planEntries(composed, harnessRootKeys) }
}

/** @internal Renders a plan as a description. */
export function describePlan(plan: Plan): HarnessDescription {
  const entries = plan.entries.map(({ entry, plugin }): DescribedEntry => {
    const config = describeConfig(entry.config)
    return {
      id: entry.id,
      name: plugin.name,
      source: entry.source,
      patchedBy: [...entry.patchedBy],
      disabled: entry.disabled,
      ...(config === undefined ? {} : { config }),
      inject: [...plugin.inject],
      optional: [...plugin.optional],
      provides: [...plugin.provides],
      startIndex: plan.startIndex.get(entry.id) ?? null,
    }
  })
  return { entries }
}

/**
 * Describes the harness `createHarness(options)` would build, without building it: the same
 * validation, composition and planning, so the two always agree.
 *
 * @param options - the harness options
 * @returns the description (JSON-safe)
 * @throws {@link InvalidOptionsError}, {@link CompositionError}, {@link UnknownEntryError},
 *   {@link MissingServicesError}, {@link ServiceConflictError}, {@link PluginCycleError} (synchronously)
 * @example
 * ```ts
 * const { entries } = describeHarness({ plugins: [metrics] })
 * console.table(entries.map((entry) => [entry.id, entry.source, entry.startIndex]))
 * ```
 */
export function describeHarness(options?: HarnessOptions): HarnessDescription {
  return describePlan(prepareHarness(options).plan)
}
