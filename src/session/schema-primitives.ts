import { z } from 'zod'
import type { JsonObject, JsonValue } from './json-value.js'

/** The longest message id. */
export const MAX_MESSAGE_ID_LENGTH = 1024

/** The longest tool-call id: `callId`, `toolCallId` and a tool-call block's `id`. */
export const MAX_CALL_ID_LENGTH = 256

const positiveMessage = 'must be a positive safe integer'
const nonNegativeMessage = 'must be a non-negative safe integer'
const nonEmptyMessage = 'must be a non-empty string'

/**
 * A positive safe integer: `turn`, `step`, `contextWindow`, `removedCount`, `maxTokens`.
 *
 * @internal
 */
export const positiveSafeIntegerSchema = z.int({ error: positiveMessage }).min(1, { error: positiveMessage })

/**
 * A non-negative safe integer: chunk indexes, token counts, `start`.
 *
 * @internal
 */
export const nonNegativeSafeIntegerSchema = z.int({ error: nonNegativeMessage }).min(0, { error: nonNegativeMessage })

/**
 * A non-empty string: `name`, `provider`, `model`, `code`.
 *
 * @internal
 */
export const nonEmptyStringSchema = z.string({ error: nonEmptyMessage }).min(1, { error: nonEmptyMessage })

/**
 * A message id: non-empty, at most {@link MAX_MESSAGE_ID_LENGTH} characters.
 *
 * @internal
 */
export const messageIdSchema = z
  .string({ error: 'must be a message id (a string)' })
  .min(1, { error: 'a message id must not be empty' })
  .max(MAX_MESSAGE_ID_LENGTH, { error: `a message id must be at most ${MAX_MESSAGE_ID_LENGTH} characters` })

/**
 * A tool-call id: non-empty, at most {@link MAX_CALL_ID_LENGTH} characters.
 *
 * @internal
 */
export const callIdSchema = z
  .string({ error: 'must be a tool-call id (a string)' })
  .min(1, { error: 'a tool-call id must not be empty' })
  .max(MAX_CALL_ID_LENGTH, { error: `a tool-call id must be at most ${MAX_CALL_ID_LENGTH} characters` })

/**
 * Any JSON value. Payloads are copied by `snapshotJson` before a schema runs, so this only rules
 * out a missing value; it is what `replayState`, `meta`, `detail` and `raw` accept.
 *
 * @internal
 */
export const jsonValueSchema = z.custom<JsonValue>((value) => value !== undefined, { error: 'must be a JSON value' })

/**
 * A JSON object (not `null`, not an array): tool `parameters`.
 *
 * @internal
 */
export const jsonObjectSchema = z.custom<JsonObject>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  { error: 'must be a JSON object' },
)

/** `T` with `readonly` removed at every level; JSON leaves stay as they are. */
type Writable<T> = [JsonValue] extends [T]
  ? T
  : T extends string | number | boolean | null | undefined
    ? T
    : { -readonly [K in keyof T]: Writable<T[K]> }

/** Whether two types are identical (not merely mutually assignable). */
type Identical<X, Y> = (<G>() => G extends X ? 1 : 2) extends <G>() => G extends Y ? 1 : 2 ? true : false

/**
 * Types a schema as `z.ZodType<T>` once the compiler has checked that the schema's output and `T`
 * describe exactly the same values (same keys, same optionality; `readonly` aside). A mismatch makes
 * the argument type `never`, so the call does not compile. Exported schemas are typed this way so
 * `z.infer` gives the hand-written interface and the docs show it rather than zod's internals.
 *
 * @example
 * ```ts
 * export const textBlockSchema = typedSchema<TextBlock>()(z.strictObject({ type: z.literal('text'), text: z.string() }))
 * ```
 * @internal
 */
export function typedSchema<T>(): <S extends z.ZodType<T>>(
  schema: S & (Identical<Writable<T>, Writable<z.output<S>>> extends true ? unknown : never),
) => z.ZodType<T> {
  return (schema) => schema
}
