import { InvalidArgumentError } from '../../errors/invalid-argument-error.js'
import type { JsonArray, JsonObject, JsonValue } from '../json-value.js'
import { isJsonArray } from './json-equals.js'

/** One open container of {@link canonicalJson}. */
interface TextFrame {
  container: JsonArray | JsonObject
  /** Sorted keys of an object; `undefined` for an array. */
  keys: string[] | undefined
  length: number
  index: number
}

/**
 * The JSON text of `value` with object keys sorted by UTF-16 code units (whitespace-free, like
 * `JSON.stringify`), so structurally equal values give equal text. Iterative, so any depth works.
 *
 * @param value - a JSON value, e.g. a result of `snapshotJson`
 * @returns the canonical JSON text
 */
export function canonicalJson(value: JsonValue): string {
  if (typeof value !== 'object' || value === null) return primitiveText(value)
  const stack: TextFrame[] = []
  /** The containers on the current path: meeting one again is a cycle. */
  const open = new Set<object>()
  let depth = 0
  let text = ''
  let next: JsonArray | JsonObject | undefined = value
  while (true) {
    if (next !== undefined) {
      if (open.has(next))
        throw new InvalidArgumentError({ argument: 'value', reason: 'is not JSON: it contains a cycle' })
      open.add(next)
      const keys = isJsonArray(next) ? undefined : Object.keys(next).sort()
      const length = keys === undefined ? (next as JsonArray).length : keys.length
      text += keys === undefined ? '[' : '{'
      const reused = stack[depth]
      if (reused === undefined) stack.push({ container: next, keys, length, index: 0 })
      else {
        reused.container = next
        reused.keys = keys
        reused.length = length
        reused.index = 0
      }
      depth++
      next = undefined
    }
    const frame = stack[depth - 1]!
    const position = frame.index
    if (position === frame.length) {
      text += frame.keys === undefined ? ']' : '}'
      open.delete(frame.container)
      if (--depth === 0) return text
      continue
    }
    frame.index = position + 1
    if (position > 0) text += ','
    let child: JsonValue
    if (frame.keys === undefined) child = (frame.container as JsonArray)[position]!
    else {
      const key = frame.keys[position]!
      text += `${JSON.stringify(key)}:`
      child = (frame.container as JsonObject)[key]!
    }
    if (typeof child === 'object' && child !== null) next = child
    else text += primitiveText(child)
  }
}

/** A primitive's JSON text; `undefined`, a bigint, a function or a symbol is not JSON. */
function primitiveText(value: unknown): string {
  const kind = typeof value
  if (kind === 'string' || kind === 'number' || kind === 'boolean' || value === null) return JSON.stringify(value)
  throw new InvalidArgumentError({
    argument: 'value',
    reason: `is not JSON: it holds a ${kind}`,
    value: kind === 'bigint' ? String(value) : undefined,
  })
}
