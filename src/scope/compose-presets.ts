import { PresetSetupError } from '../errors/preset-errors.js'
import type { Context, DisposeError } from '../kernel/context.js'
import { SystemPromptKey } from '../prompt/system-prompt-key.js'
import { instructionSections } from '../prompt/instructions.js'
import type { PresetDefinition } from './define-preset.js'
import type { Preset, PresetRegistryControl } from './preset-registry.js'

/** @internal The composed presets of one harness, as its close sequence disposes them. */
export interface PresetComposition {
  /** Disposes every preset context in reverse declaration order, one after the other; resolves with their cleanup errors. */
  dispose(): Promise<DisposeError[]>
}

const maxLabelLength = 64

/** `preset:<name>`, cut to the 64 characters a context label may have (names may be 64 long). */
function labelOf(name: string): string {
  return `preset:${name}`.slice(0, maxLabelLength)
}

async function disposeAll(contexts: readonly Context[]): Promise<DisposeError[]> {
  const errors: DisposeError[] = []
  for (const context of [...contexts].reverse()) errors.push(...(await context.dispose()).errors)
  return errors
}

/** Gives one preset its context, instructions, plugins (in order) and setup. */
async function composeOne(
  root: Context,
  definition: PresetDefinition,
  control: PresetRegistryControl,
  contexts: Context[],
): Promise<void> {
  const preset: Preset = Object.freeze({ name: definition.name })
  const ctx = root.child(labelOf(definition.name), { scope: preset })
  contexts.push(ctx)
  ctx.effect(() => control.add(preset, ctx, definition.options), 'preset')
  if (definition.instructions !== undefined) {
    // Without a system-prompt provider (the entry disabled) there is nowhere to put instructions.
    const prompt = ctx.getOptional(SystemPromptKey)
    if (prompt !== undefined)
      for (const section of instructionSections(definition.instructions)) prompt.section(section)
  }
  for (const plugin of definition.plugins ?? []) await ctx.plugin(plugin)
  await definition.setup?.(ctx)
}

/**
 * Composes the presets of a harness, after its entries
 * started: each in declaration order gets `root.child('preset:<name>', { scope: preset })`, its
 * instructions registered through that context's system prompt, its plugins started in order as
 * runtime plugins of that context, then `setup(ctx)`. A failure disposes every preset composed so
 * far (the failing one included), in reverse order, and rejects; the caller rolls the rest back.
 *
 * @internal
 * @throws {@link PresetSetupError} `PRESET_SETUP_FAILED` naming the preset, the failure as `cause`
 */
export async function composePresets(
  root: Context,
  definitions: readonly PresetDefinition[],
  control: PresetRegistryControl,
): Promise<PresetComposition> {
  const contexts: Context[] = []
  for (const definition of definitions) {
    try {
      await composeOne(root, definition, control, contexts)
    } catch (cause) {
      await disposeAll(contexts)
      throw new PresetSetupError({ preset: definition.name, cause })
    }
  }
  let disposing: Promise<DisposeError[]> | undefined
  return {
    dispose: () => {
      disposing ??= disposeAll(contexts)
      return disposing
    },
  }
}
