import type { JsonValue } from './json-value.js'

/**
 * `JSON.stringify` of a lossless-JSON value, without its recursion limit: the native call for
 * ordinary values, an iterative writer (same output) when the value nests deeper than the
 * native stack allows.
 *
 * @internal
 */
export function jsonText(value: JsonValue): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    return iterativeJsonText(value)
  }
}

type Frame =
  | { readonly kind: 'array'; readonly items: readonly JsonValue[]; index: number }
  | {
      readonly kind: 'object'
      readonly record: { readonly [key: string]: JsonValue }
      readonly keys: readonly string[]
      index: number
    }

function iterativeJsonText(root: JsonValue): string {
  const parts: string[] = []
  const stack: Frame[] = []
  const open = (value: JsonValue): void => {
    if (value === null || typeof value !== 'object') {
      parts.push(JSON.stringify(value))
    } else if (Array.isArray(value)) {
      parts.push('[')
      stack.push({ kind: 'array', items: value as readonly JsonValue[], index: 0 })
    } else {
      parts.push('{')
      const record = value as { readonly [key: string]: JsonValue }
      stack.push({ kind: 'object', record, keys: Object.keys(record), index: 0 })
    }
  }
  open(root)
  for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
    if (frame.kind === 'array') {
      if (frame.index === frame.items.length) {
        parts.push(']')
        stack.pop()
        continue
      }
      if (frame.index > 0) parts.push(',')
      open(frame.items[frame.index++] as JsonValue)
    } else {
      if (frame.index === frame.keys.length) {
        parts.push('}')
        stack.pop()
        continue
      }
      const key = frame.keys[frame.index++] as string
      parts.push(`${frame.index > 1 ? ',' : ''}${JSON.stringify(key)}:`)
      open(frame.record[key] as JsonValue)
    }
  }
  return parts.join('')
}
