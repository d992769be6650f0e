import { z } from 'zod'
import type { JsonObject } from './json-value.js'
import { jsonObjectSchema, nonEmptyStringSchema, typedSchema } from './schema-primitives.js'

/**
 * Which tools the model may call in one request: `'auto'` (the model decides; the default),
 * `'none'` (tools stay described but no call is allowed, so the model answers in text),
 * `'required'` (at least one call) or `{ name }` (exactly that tool).
 */
export type ToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | {
      /** The one tool the model must call. */
      readonly name: string
    }

/** The shape the model's final answer must have: JSON text matching a JSON Schema. */
export interface ResponseFormat {
  /** Always `'json'`. */
  readonly type: 'json'
  /** The JSON Schema the answer must match. */
  readonly schema: JsonObject
  /** A name for the schema, for providers that require one; non-empty. Adapters default it to `'output'`. */
  readonly name?: string
}

/**
 * The strict schema of a {@link ToolChoice}.
 *
 * @internal
 */
export const toolChoiceSchema = typedSchema<ToolChoice>()(
  z.union(
    [
      z.enum(['auto', 'none', 'required']),
      z.strictObject({ name: nonEmptyStringSchema }, { error: "must be 'auto', 'none', 'required' or { name }" }),
    ],
    { error: "must be 'auto', 'none', 'required' or { name }" },
  ),
)

/**
 * The strict schema of a {@link ResponseFormat}.
 *
 * @internal
 */
export const responseFormatSchema = typedSchema<ResponseFormat>()(
  z.strictObject(
    {
      type: z.literal('json', { error: "must be 'json'" }),
      schema: jsonObjectSchema,
      name: nonEmptyStringSchema.exactOptional(),
    },
    { error: "must be { type: 'json', schema, name? }" },
  ),
)
