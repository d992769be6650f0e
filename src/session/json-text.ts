import type { JsonValue } from './json-value.js'

/** Texts handed on from write-behind to the encoder (WB7), keyed by the frozen event. */
const handedOn = new WeakMap<object, string>()

/**
 * Records the JSON text of a deep-frozen value so {@link jsonText} returns it without
 * stringifying again (write-behind measures each event once and hands the text on, WB7). The
 * caller removes it with {@link forgetJsonText} once the text is no longer needed.
 *
 * @param value - a deep-frozen lossless-JSON object (a committed event)
 * @param text - its `JSON.stringify` text
 * @internal
 */
export function rememberJsonText(value: object, text: string): void {
  handedOn.set(value, text)
}

/**
 * Drops a text recorded by {@link rememberJsonText}.
 *
 * @param value - the value it was recorded for
 * @internal
 */
export function forgetJsonText(value: object): void {
  handedOn.delete(value)
}

/**
 * `JSON.stringify` of a lossless-JSON value, without its recursion limit: the native call for
 * ordinary values, an iterative writer (same output) when the value nests deeper than the
 * native stack allows. A text recorded by {@link rememberJsonText} is returned as it is.
 *
 * @internal
 */
export function jsonText(value: JsonValue): string {
  if (typeof value === 'object' && value !== null) {
    const known = handedOn.get(value)
    if (known !== undefined) return known
  }
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    return iterativeJsonText(value)
  }
}

type Frame =
  | { readonly kind: 'array'; readonly items: readonly JsonValue[]; index: number }
  | { readonly kind: 'object'; readonly record: { readonly [key: string]: JsonValue }; readonly keys: readonly string[]; index: number }

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
