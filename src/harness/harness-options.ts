import { z } from 'zod'
import { maxStepsSchema } from '../agent/agent-options.js'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import { type ValidationIssue, valueAt } from '../errors/issue.js'
import type { CompositionLayers, EntryPatch, PluginEntry } from '../kernel/compose-layers.js'
import type { Clock, IdSource, Logger } from '../kernel/host-services.js'
import type { PluginInput } from '../kernel/plugin.js'
import type { ModelAdapter, ModelRoute } from '../model/model-adapter.js'
import { modelOptionSchema } from '../model/model-plugin.js'
import type { Durability } from '../persistence/durability.js'
import type { PersistenceAdapter } from '../persistence/persistence-adapter.js'
import {
  isPersistenceAdapter,
  type JsonlShorthand,
  type PersistenceEntryConfig,
} from '../persistence/persistence-plugin.js'
import { type Instructions, instructionsSchema } from '../prompt/instructions.js'
import type { PresetDefinition } from '../scope/define-preset.js'
import { presetsOptionSchema } from '../scope/preset-issues.js'
import type { ToolDefinition } from '../tools/tool-definition.js'
import { toolListSchema } from '../tools/tools-plugin.js'

/** The options of `createHarness()` and `describeHarness()`. Read, never mutated. */
export interface HarnessOptions extends CompositionLayers {
  /**
   * Plugins appended after the default bundle: definitions, classes or `{ id?, plugin, config?, disabled? }`.
   *
   * @default []
   */
  readonly plugins?: readonly (PluginInput | PluginEntry)[]
  /**
   * Patches applied in order to the composed entry list (replace or merge a config, toggle, insert, swap).
   *
   * @default []
   */
  readonly patches?: readonly EntryPatch[]
  /**
   * The clock every timer and timestamp goes through.
   *
   * @default the system clock
   */
  readonly clock?: Clock
  /**
   * The id source.
   *
   * @default `() => crypto.randomUUID()`
   */
  readonly ids?: IdSource
  /**
   * The logger.
   *
   * @default warn and error to stderr, debug and info dropped
   */
  readonly logger?: Logger
  /**
   * The harness model: an adapter, or a route `{ adapter, provider?, model?, …call config }`. The
   * `model` entry registers it in the global layer (under `route.provider ?? adapter.provider`);
   * a route's call-config fields become the agents' call-config defaults.
   *
   * @default none (agents need their own model, or an `agent/request` listener)
   */
  readonly model?: ModelAdapter | ModelRoute
  /**
   * Where sessions are stored: an adapter, or `{ dir, compression? }` for
   * `jsonlPersistence({ dir, compression })`, or `false` for no store at all (ephemeral agents):
   * the `persistence` entry is disabled, so nothing is written or listed, no session is bound
   * to a write-behind queue, and every flush resolves at once. `harness.persistence` then throws
   * `ServiceMissingError`, `resumeAgent` and `openAgent` of an id that is not live reject, and
   * `listSessions` lists the live sessions only.
   *
   * @default `memoryPersistence()` (nothing survives the process)
   */
  readonly persistence?: PersistenceAdapter | JsonlShorthand | false
  /**
   * Write-behind tuning of the `persistence` entry (`windowMs`, `maxPendingEvents`,
   * `maxPendingBytes`); checked by that entry's schema.
   *
   * @default `{ windowMs: 200, maxPendingEvents: 10000, maxPendingBytes: 16 MiB }`
   */
  readonly writeBehind?: PersistenceEntryConfig['writeBehind']
  /**
   * How long one storage call of a live session may take before it counts as failed with
   * `PersistenceError` `WRITE_TIMEOUT` (the events stay queued and are retried): an integer from
   * 0 to 2147483647 milliseconds, `0` for no timeout; checked by the persistence entry's schema.
   * It also bounds how long `agent.dispose()` and `harness.close()` wait for a hung storage.
   *
   * @default 30000
   */
  readonly writeTimeoutMs?: PersistenceEntryConfig['writeTimeoutMs']
  /**
   * When the events of a live session are synced to stable storage. `'step'`: before every model
   * request, before every tool body and at the end of every turn. `'turn'`: every checkpoint
   * still writes the events in order, but only the end of a turn syncs, so a crash of the
   * machine (not of the process) may lose the open turn's events; resuming closes that turn as
   * interrupted. Any other value is `InvalidOptionsError` naming it.
   *
   * @default 'step'
   */
  readonly durability?: Durability
  /**
   * How many concurrency-safe tool calls run at once; the default of every agent's options.
   *
   * @default 10
   */
  readonly maxParallelToolCalls?: number
  /**
   * How many model requests (steps) one turn may make, the default of every agent's options: a
   * positive integer, or `Infinity` for no limit. The last allowed step forbids tool calls, so the
   * model answers in text, and the turn ends `{ kind: 'max-steps', limit }`.
   *
   * @default 25
   */
  readonly maxSteps?: number
  /**
   * Tools (`defineTool`) registered in the global layer by the `tools` entry;
   * names must be distinct (a repeated name is an issue at `['tools', i, 'name']`).
   *
   * @default []
   */
  readonly tools?: readonly ToolDefinition[]
  /**
   * The harness persona, registered in the global prompt layer by the `system-prompt` entry: a
   * string is the section `{ name: 'instructions', order: 0, text }`; an array registers each
   * `{ name, order?, text }` (order 0 by default) as a section.
   *
   * @default none
   */
  readonly instructions?: Instructions
  /**
   * Presets (`definePreset`), composed in order once the entries started.
   * Names must be distinct; a bad field or a repeated name is an issue at `['presets', i, field]`.
   *
   * @default []
   */
  readonly presets?: readonly PresetDefinition[]
}

const isFunction = (value: unknown): boolean => typeof value === 'function'
const fn = z.custom<unknown>(isFunction, { error: 'must be a function' })
const positiveInteger = z
  .number({ error: 'must be a positive integer' })
  .int({ error: 'must be a positive integer' })
  .min(1, { error: 'must be a positive integer' })

const optionsSchema = z.strictObject(
  {
    plugins: z.array(z.unknown(), { error: 'must be an array of plugins or entries' }).optional(),
    patches: z.array(z.unknown(), { error: 'must be an array of patches' }).optional(),
    clock: z.object({ now: fn, setTimer: fn }, { error: 'must be a Clock { now(), setTimer() }' }).optional(),
    ids: fn.optional(),
    logger: z
      .object({ debug: fn, info: fn, warn: fn, error: fn }, { error: 'must be a Logger { debug, info, warn, error }' })
      .optional(),
    maxParallelToolCalls: positiveInteger.optional(),
    maxSteps: maxStepsSchema.optional(),
    model: modelOptionSchema.optional(),
    persistence: z
      .union(
        [
          z.custom<PersistenceAdapter>(isPersistenceAdapter),
          z.strictObject({ dir: z.string().min(1), compression: z.enum(['none', 'gzip', 'zstd']).optional() }),
          z.literal(false),
        ],
        {
          error: 'must be a PersistenceAdapter, { dir: string; compression?: "none" | "gzip" | "zstd" } or false',
        },
      )
      .optional(),
    // Checked by the persistence entry's schema: a bad value fails as a PluginStartError with a PluginConfigError cause.
    writeBehind: z.unknown().optional(),
    writeTimeoutMs: z.unknown().optional(),
    durability: z.enum(['step', 'turn'], { error: "must be 'step' or 'turn'" }).optional(),
    tools: toolListSchema.optional(),
    instructions: instructionsSchema.optional(),
    presets: presetsOptionSchema.optional(),
  },
  { error: 'must be an options object' },
)

/**
 * Checks harness options against the options schema: every issue at once,
 * an unknown key as `{ path: [key], message: 'unknown option' }`, issues in the order of the
 * options' keys.
 *
 * @internal
 */
export function validateHarnessOptions(options: unknown): HarnessOptions {
  if (options === undefined) return {}
  const result = optionsSchema.safeParse(options)
  if (result.success) return options as HarnessOptions
  const issues: ValidationIssue[] = []
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ path: [...issue.path.map(String), key], message: 'unknown option' })
      continue
    }
    issues.push({
      path: issue.path.map((part) => (typeof part === 'number' ? part : String(part))),
      message: issue.message,
    })
  }
  const keys = typeof options === 'object' && options !== null ? Object.keys(options) : []
  const rank = (issue: ValidationIssue): number => {
    const index = keys.indexOf(String(issue.path[0]))
    return index === -1 ? keys.length : index
  }
  issues.sort((left, right) => rank(left) - rank(right))
  const first = issues[0]
  throw new InvalidOptionsError({ issues, value: first === undefined ? options : valueAt(options, first.path) })
}
