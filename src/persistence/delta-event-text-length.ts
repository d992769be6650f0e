import type { SessionEvent } from '../session/session-event.js'

const envelopeKeys = ['type', 'seq', 'time', 'data'] as const
const payloadKeys = ['turn', 'step', 'chunk'] as const
const deltaKeys = ['type', 'index', 'text'] as const

/** Whether `value`'s enumerable keys, as `JSON.stringify` visits them, are exactly `keys`, in order. */
function keysAre(value: object, keys: readonly string[]): boolean {
  let index = 0
  for (const key in value) if (key !== keys[index++]) return false
  return index === keys.length
}

/** The length of a safe integer's JSON text, else `NaN` (which makes the sum `NaN`). */
function integerLength(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) ? String(value).length : Number.NaN
}

/** Characters `JSON.stringify` may escape: quote, backslash, controls, and surrogates (a lone one is escaped). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes
const mayEscape = /["\\\u0000-\u001f\ud800-\udfff]/

/** The length of a string's JSON text (without building it when nothing in it is escaped), else `NaN`. */
function stringLength(value: unknown): number {
  if (typeof value !== 'string') return Number.NaN
  return mayEscape.test(value) ? JSON.stringify(value).length : value.length + 2
}

/** The fixed characters of `{"type":…,"seq":…,"time":…,"data":{"turn":…,"step":…,"chunk":{"type":…,"index":…,"text":…}}}`. */
const FIXED_LENGTH =
  '{"type":,"seq":,"time":,"data":'.length + '{"turn":,"step":,"chunk":'.length + '{"type":,"index":,"text":}}}'.length

/**
 * The length of `JSON.stringify(event)` for the event a stream is mostly made of, an
 * `assistant/chunk` of a text or reasoning delta (`{type, seq, time, data: {turn, step, chunk:
 * {type, index, text}}}`, keys in that order, integers safe), computed from its fields without
 * building the text: write-behind measures its queue with it, and the adapter then encodes each
 * such event once, in its chunk row. `undefined` for any other event.
 *
 * @param event - a queued event
 * @returns the text's length, or `undefined`
 * @internal
 */
export function deltaEventTextLength(event: SessionEvent): number | undefined {
  if (event.type !== 'assistant/chunk' || !keysAre(event, envelopeKeys)) return undefined
  const data = event.data as unknown
  if (typeof data !== 'object' || data === null || Array.isArray(data) || !keysAre(data, payloadKeys)) return undefined
  const payload = data as { readonly turn: unknown; readonly step: unknown; readonly chunk: unknown }
  const chunk = payload.chunk
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk) || !keysAre(chunk, deltaKeys))
    return undefined
  const delta = chunk as { readonly type: unknown; readonly index: unknown; readonly text: unknown }
  if (delta.type !== 'text-delta' && delta.type !== 'reasoning-delta') return undefined
  const length =
    FIXED_LENGTH +
    stringLength(event.type) +
    integerLength(event.seq) +
    integerLength(event.time) +
    integerLength(payload.turn) +
    integerLength(payload.step) +
    stringLength(delta.type) +
    integerLength(delta.index) +
    stringLength(delta.text)
  return Number.isNaN(length) ? undefined : length
}
