import { z } from 'zod'
import type { JsonObject } from './json-value.js'
import { type ResponseFormat, responseFormatSchema, type ToolChoice, toolChoiceSchema } from './response-format.js'
import { jsonObjectSchema, nonEmptyStringSchema, positiveSafeIntegerSchema, typedSchema } from './schema-primitives.js'
import type { SessionEvent } from './session-event.js'
import { canonicalJson } from './snapshot/canonical-json.js'

/** The model-call settings of a request (the model layer's `CallConfig`). */
export interface CallConfig {
  /** The provider route id; non-empty. */
  readonly provider: string
  /** The adapter-owned model id; non-empty. */
  readonly model: string
  /** The reasoning effort, e.g. `'high'`; non-empty. */
  readonly reasoningEffort?: string
  /** The sampling temperature: finite, at least 0. */
  readonly temperature?: number
  /** The output ceiling: a positive safe integer. */
  readonly maxTokens?: number
  /** Stop sequences. */
  readonly stop?: readonly string[]
}

/**
 * Marks config fields the adapter filled from its model defaults rather than the caller choosing them,
 * so a later request does not persist them as choices. Each marker needs the same `config` field.
 */
export interface AdapterDefaults {
  /** `config.reasoningEffort` is the model's default. */
  readonly reasoningEffort?: true
  /** `config.maxTokens` is the model's default. */
  readonly maxTokens?: true
}

/** A tool as the model sees it. */
export interface ToolSchema {
  /** The tool name; non-empty and unique within a header. */
  readonly name: string
  /** What the tool does, for the model. */
  readonly description: string
  /** The JSON Schema of the arguments. */
  readonly parameters: JsonObject
}

/** A full snapshot of what a request sends besides the messages. */
export interface RequestHeader {
  /** The model-call settings. */
  readonly config: CallConfig
  /** Which config fields are adapter defaults. */
  readonly adapterDefaults?: AdapterDefaults
  /** The system prompt; absent is the same as `''`. */
  readonly system?: string
  /** The tools offered, in order; absent is the same as `[]`. */
  readonly tools?: readonly ToolSchema[]
  /**
   * Which tools the model may call; absent is the same as `'auto'`. The agent loop sets `'none'`
   * on the last step its step limit allows.
   */
  readonly toolChoice?: ToolChoice
  /** The JSON shape the answer must have (a run's `output`); absent means free text. */
  readonly responseFormat?: ResponseFormat
}

/** The strict schema of a {@link CallConfig}. */
export const callConfigSchema = typedSchema<CallConfig>()(
  z.strictObject({
    provider: nonEmptyStringSchema,
    model: nonEmptyStringSchema,
    reasoningEffort: nonEmptyStringSchema.exactOptional(),
    temperature: z
      .number({ error: 'must be a finite number of at least 0' })
      .min(0, { error: 'must be a finite number of at least 0' })
      .exactOptional(),
    maxTokens: positiveSafeIntegerSchema.exactOptional(),
    stop: z.array(z.string(), { error: 'must be an array of strings' }).exactOptional(),
  }),
)

/** The strict schema of {@link AdapterDefaults}: each marker is exactly `true`. */
export const adapterDefaultsSchema = typedSchema<AdapterDefaults>()(
  z.strictObject(
    {
      reasoningEffort: z.literal(true, { error: 'must be exactly true' }).exactOptional(),
      maxTokens: z.literal(true, { error: 'must be exactly true' }).exactOptional(),
    },
    { error: 'must be an object of adapter-default markers' },
  ),
)

/** The strict schema of a {@link ToolSchema}. */
export const toolSchemaSchema = typedSchema<ToolSchema>()(
  z.strictObject({
    name: nonEmptyStringSchema,
    description: z.string(),
    parameters: jsonObjectSchema,
  }),
)

/**
 * The strict schema of a {@link RequestHeader}: every adapter-default marker needs its `config`
 * field, and tool names are unique.
 */
export const requestHeaderSchema = typedSchema<RequestHeader>()(
  z
    .strictObject({
      config: callConfigSchema,
      adapterDefaults: adapterDefaultsSchema.exactOptional(),
      system: z.string().exactOptional(),
      tools: z.array(toolSchemaSchema).exactOptional(),
      toolChoice: toolChoiceSchema.exactOptional(),
      responseFormat: responseFormatSchema.exactOptional(),
    })
    .superRefine((header, context) => {
      for (const field of ['reasoningEffort', 'maxTokens'] as const) {
        if (header.adapterDefaults?.[field] === true && header.config[field] === undefined) {
          context.addIssue({
            code: 'custom',
            path: ['adapterDefaults', field],
            message: `marks config.${field} as an adapter default, but config.${field} is not set`,
          })
        }
      }
      const seen = new Set<string>()
      for (const [index, tool] of (header.tools ?? []).entries()) {
        if (seen.has(tool.name)) {
          context.addIssue({
            code: 'custom',
            path: ['tools', index, 'name'],
            message: `duplicate tool name "${tool.name}"`,
          })
        }
        seen.add(tool.name)
      }
    }),
)

/**
 * The canonical form of a header: `config`, then `adapterDefaults` only if it holds a marker,
 * `system` only if non-empty, `tools` only if non-empty, `toolChoice` only if not `'auto'` and
 * `responseFormat` when set. Sub-objects are shared, not copied.
 *
 * @param header - a valid header
 * @returns a new header object in canonical form
 * @example
 * ```ts
 * canonicalHeader({ config, adapterDefaults: {}, system: '', tools: [] }) // → { config }
 * ```
 */
export function canonicalHeader(header: RequestHeader): RequestHeader {
  const { adapterDefaults, system, tools, toolChoice, responseFormat } = header
  const hasMarker = adapterDefaults?.reasoningEffort === true || adapterDefaults?.maxTokens === true
  return {
    config: header.config,
    ...(hasMarker ? { adapterDefaults } : {}),
    ...(system !== undefined && system !== '' ? { system } : {}),
    ...(tools !== undefined && tools.length > 0 ? { tools } : {}),
    ...(toolChoice !== undefined && toolChoice !== 'auto' ? { toolChoice } : {}),
    ...(responseFormat === undefined ? {} : { responseFormat }),
  }
}

/**
 * Whether two headers ask for the same request: the same config fields (`stop` element-wise), the
 * same adapter-default markers, the same `system` (absent ≡ `''`), the same tools in order,
 * compared as canonical JSON (absent ≡ `[]`), the same `toolChoice` (absent ≡ `'auto'`) and the
 * same `responseFormat` (canonical JSON).
 *
 * @param left - a valid header
 * @param right - a valid header
 * @returns `true` when a `change` between them would be a no-op
 */
export function headerEquals(left: RequestHeader, right: RequestHeader): boolean {
  const a = left.config
  const b = right.config
  if (
    a.provider !== b.provider ||
    a.model !== b.model ||
    a.reasoningEffort !== b.reasoningEffort ||
    a.temperature !== b.temperature ||
    a.maxTokens !== b.maxTokens ||
    !sameStop(a.stop, b.stop)
  ) {
    return false
  }
  if ((left.adapterDefaults?.reasoningEffort === true) !== (right.adapterDefaults?.reasoningEffort === true))
    return false
  if ((left.adapterDefaults?.maxTokens === true) !== (right.adapterDefaults?.maxTokens === true)) return false
  if ((left.system ?? '') !== (right.system ?? '')) return false
  if (toolChoiceKey(left.toolChoice) !== toolChoiceKey(right.toolChoice)) return false
  if (responseFormatKey(left.responseFormat) !== responseFormatKey(right.responseFormat)) return false
  const leftTools = left.tools ?? []
  const rightTools = right.tools ?? []
  if (leftTools.length !== rightTools.length) return false
  return leftTools.every((tool, index) => {
    const other = rightTools[index]
    return other !== undefined && canonicalToolJson(tool) === canonicalToolJson(other)
  })
}

/**
 * The request header a log ends with: the canonical form of the last `request/header` event's
 * header, else `from` itself (the fold so far, for incremental use), else `undefined`.
 *
 * @param events - committed events, in log order
 * @param from - the header folded from the events before `events`
 * @returns the folded header
 */
export function foldRequestHeader(
  events: readonly SessionEvent<string, unknown>[],
  from?: RequestHeader,
): RequestHeader | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]
    if (event?.type === 'request/header') {
      return canonicalHeader((event.data as { readonly header: RequestHeader }).header)
    }
  }
  return from
}

function sameStop(left: readonly string[] | undefined, right: readonly string[] | undefined): boolean {
  if (left === undefined || right === undefined) return left === right
  return left.length === right.length && left.every((value, index) => value === right[index])
}

function toolChoiceKey(choice: ToolChoice | undefined): string {
  if (choice === undefined) return 'auto'
  return typeof choice === 'string' ? choice : canonicalJson({ name: choice.name })
}

function responseFormatKey(format: ResponseFormat | undefined): string {
  if (format === undefined) return ''
  return canonicalJson({
    type: format.type,
    schema: format.schema,
    ...(format.name === undefined ? {} : { name: format.name }),
  })
}

function canonicalToolJson(tool: ToolSchema): string {
  return canonicalJson({ name: tool.name, description: tool.description, parameters: tool.parameters })
}
