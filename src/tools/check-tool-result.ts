/**
 * The field checks behind tool results: the rich result a tool opts into with `toolResult()`, and
 * the normalized form middleware returns. Every check copies what it accepts and names the field
 * it refuses.
 *
 * @module
 */
import { isPlainObject } from '../kernel/is-plain-object.js'
import type { JsonObject } from '../session/json-value.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'
import type { ToolContentBlock } from './tool-definition.js'
import type { ToolResult, ToolResultCode, ToolResultFailure } from './tool-result-shape.js'

/**
 * Marks a value made by `toolResult()`. A symbol key: a value parsed from JSON can never carry
 * one, so a plain object that merely has a `content` key is never taken for a rich result.
 * `Symbol.for`, so a result made by another loaded copy of the package (ESM and CJS) still counts.
 *
 * @internal
 */
export const toolResultBrand: symbol = Symbol.for('yoke.toolResult')

/**
 * Whether `value` was made by `toolResult()` (by any loaded copy of the package).
 *
 * @internal
 */
export function isBrandedToolResult(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, toolResultBrand)
}

/**
 * A checked part, or why it is invalid (the message names the field).
 *
 * @internal
 */
export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string }

type AdditionalContext = string | readonly ToolContentBlock[]

const RESULT_KEYS: ReadonlySet<PropertyKey> = new Set([
  'content',
  'isError',
  'meta',
  'concludesTurn',
  'additionalContexts',
])
const RESULT_CODES: ReadonlySet<unknown> = new Set<ToolResultCode>([
  'UNKNOWN_TOOL',
  'INVALID_ARGUMENTS',
  'TOOL_DENIED',
  'TOOL_FAILED',
  'TOOL_TIMEOUT',
  'TOOL_ABORTED_BEFORE_DISPATCH',
  'TOOL_ABORTED',
  'TOOL_SCHEDULER_FAILED',
])

/** @internal A passed check. */
export const ok = <T>(value: T): Checked<T> => ({ ok: true, value })
/** @internal A failed check naming the problem. */
export const invalid = (problem: string): { readonly ok: false; readonly problem: string } => ({ ok: false, problem })

/** The first own key of `value` not in `allowed`, if any. */
function extraKey(value: object, allowed: ReadonlySet<PropertyKey>): string | undefined {
  for (const key of Reflect.ownKeys(value)) if (!allowed.has(key) && key !== toolResultBrand) return String(key)
  return undefined
}

const ERROR_KEYS: ReadonlySet<PropertyKey> = new Set(['code', 'message'])
const RESULT_KEYS_WITH_ERROR: ReadonlySet<PropertyKey> = new Set([...RESULT_KEYS, 'error'])
const TEXT_KEYS: ReadonlySet<PropertyKey> = new Set(['type', 'text'])
const IMAGE_KEYS: ReadonlySet<PropertyKey> = new Set(['type', 'mediaType', 'uri'])

function checkBlock(block: unknown, path: string): Checked<ToolContentBlock> {
  if (!isPlainObject(block)) return invalid(`${path} is not a content block`)
  const type = block['type']
  if (type === 'text') {
    const extra = extraKey(block, TEXT_KEYS)
    if (extra !== undefined) return invalid(`${path}.${extra} is not a text block field`)
    const text = block['text']
    if (typeof text !== 'string') return invalid(`${path}.text is not a string`)
    return ok(Object.freeze({ type, text }))
  }
  if (type === 'image') {
    const extra = extraKey(block, IMAGE_KEYS)
    if (extra !== undefined) return invalid(`${path}.${extra} is not an image block field`)
    const mediaType = block['mediaType']
    if (typeof mediaType !== 'string' || !mediaType.startsWith('image/'))
      return invalid(`${path}.mediaType is not an image media type (image/…)`)
    const uri = block['uri']
    if (typeof uri !== 'string' || uri.length === 0) return invalid(`${path}.uri is not a non-empty string`)
    return ok(Object.freeze({ type, mediaType, uri }))
  }
  if (typeof type === 'string') return invalid(`${path} is a "${type}" block; only text and image blocks are allowed`)
  return invalid(`${path} is not a content block`)
}

function checkBlocks(blocks: readonly unknown[], path: string): Checked<readonly ToolContentBlock[]> {
  const copies: ToolContentBlock[] = []
  for (let index = 0; index < blocks.length; index++) {
    const checked = checkBlock(blocks[index], `${path}[${index}]`)
    if (!checked.ok) return checked
    copies.push(checked.value)
  }
  return ok(Object.freeze(copies))
}

/**
 * Checks a result's `content`: a string (one text block) or text and image blocks, copied.
 *
 * @internal
 */
export function checkContent(content: unknown): Checked<readonly ToolContentBlock[]> {
  if (typeof content === 'string') return ok(Object.freeze([Object.freeze({ type: 'text', text: content } as const)]))
  if (Array.isArray(content)) return checkBlocks(content, 'content')
  return invalid('content is not a string or an array of text and image blocks')
}

function checkContexts(contexts: unknown): Checked<readonly AdditionalContext[]> {
  if (!Array.isArray(contexts)) return invalid('additionalContexts is not an array')
  const copies: AdditionalContext[] = []
  for (let index = 0; index < contexts.length; index++) {
    const context: unknown = contexts[index]
    const path = `additionalContexts[${index}]`
    if (typeof context === 'string') copies.push(context)
    else if (Array.isArray(context)) {
      const checked = checkBlocks(context, path)
      if (!checked.ok) return checked
      copies.push(checked.value)
    } else return invalid(`${path} is not a string or an array of text and image blocks`)
  }
  return ok(Object.freeze(copies))
}

function checkError(error: unknown): Checked<ToolResultFailure> {
  if (!isPlainObject(error)) return invalid('error is not an object { code, message }')
  const extra = extraKey(error, ERROR_KEYS)
  if (extra !== undefined) return invalid(`error.${extra} is not an error field`)
  const code = error['code']
  if (!RESULT_CODES.has(code)) return invalid('error.code is not a tool result code')
  const message = error['message']
  if (typeof message !== 'string') return invalid('error.message is not a string')
  return ok(Object.freeze({ code: code as ToolResultCode, message }))
}

function checkBoolean(value: unknown, field: string): Checked<boolean> {
  if (value === undefined) return ok(false)
  return typeof value === 'boolean' ? ok(value) : invalid(`${field} is not a boolean`)
}

/**
 * Checks the object form of a result (`content`, `isError?`, `meta?`, `concludesTurn?`,
 * `additionalContexts?`, and `error?` when `allowError`) and returns its frozen normalized copy.
 * The `toolResult()` brand is not a field.
 *
 * @internal
 */
export function checkObject(value: Readonly<Record<string, unknown>>, allowError: boolean): Checked<ToolResult> {
  const extra = extraKey(value, allowError ? RESULT_KEYS_WITH_ERROR : RESULT_KEYS)
  if (extra !== undefined) return invalid(`${extra} is not a result field`)
  const content = checkContent(value['content'])
  if (!content.ok) return content
  const isError = checkBoolean(value['isError'], 'isError')
  if (!isError.ok) return isError
  const concludesTurn = checkBoolean(value['concludesTurn'], 'concludesTurn')
  if (!concludesTurn.ok) return concludesTurn
  let meta: JsonObject | undefined
  const rawMeta = value['meta']
  if (rawMeta !== undefined) {
    if (!isPlainObject(rawMeta)) return invalid('meta is not a plain JSON object')
    try {
      meta = snapshotJson(rawMeta, 'meta') as JsonObject
    } catch {
      return invalid('meta is not a plain JSON object')
    }
  }
  let contexts: readonly AdditionalContext[] = Object.freeze([])
  const rawContexts = value['additionalContexts']
  if (rawContexts !== undefined) {
    const checked = checkContexts(rawContexts)
    if (!checked.ok) return checked
    contexts = checked.value
  }
  let error: ToolResultFailure | undefined
  const rawError = value['error']
  if (rawError !== undefined) {
    const checked = checkError(rawError)
    if (!checked.ok) return checked
    if (!isError.value) return invalid('error is set on a result whose isError is not true')
    error = checked.value
  }
  return ok(
    Object.freeze({
      content: content.value,
      isError: isError.value,
      ...(error === undefined ? {} : { error }),
      ...(meta === undefined ? {} : { meta }),
      concludesTurn: concludesTurn.value,
      additionalContexts: contexts,
    }),
  )
}
