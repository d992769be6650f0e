import { type ComposedEntry, composeLayers } from '../kernel/compose-layers.js'
import { defaultBundle } from './default-bundle.js'
import { type HarnessOptions, validateHarnessOptions } from './harness-options.js'

/**
 * Composes the entry list a harness would start: the default bundle, then `options.plugins`,
 * then `options.patches`. Pure and deterministic: runs no plugin code, does no I/O, never mutates
 * `options` (frozen options work).
 *
 * @param options - the harness options (only `plugins` and `patches` matter here)
 * @returns the composed entries with their provenance
 * @throws {@link InvalidOptionsError} when `options` fails the options schema, as
 *   in {@link describeHarness}; {@link CompositionError}, {@link UnknownEntryError}, {@link InvalidPluginError}
 * @example
 * ```ts
 * const entries = composeEntries({ plugins: [metrics], patches: [{ id: 'metrics', merge: { level: 2 } }] })
 * ```
 */
export function composeEntries(options?: HarnessOptions): ComposedEntry[] {
  return composeCheckedEntries(validateHarnessOptions(options))
}

/**
 * {@link composeEntries} over options the options schema has already accepted.
 *
 * @internal
 */
export function composeCheckedEntries(options: HarnessOptions): ComposedEntry[] {
  return composeLayers(defaultBundle(options), options)
}
