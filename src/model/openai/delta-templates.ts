/**
 * A fast path for the bulk of a Chat Completions stream: events that differ from an earlier one
 * only in their one text delta (the SSE figure).
 *
 * A streamed answer is thousands of events like
 * `data: {"id":"…","created":…,"choices":[{"index":0,"delta":{"content":" token"},…}],"usage":null}`
 * whose bytes repeat except for the delta string. Once one of them has been fully parsed, the
 * next ones are recognised by their bytes: the same bytes before the string, one JSON string
 * token, the same bytes after it, then the blank line. Replacing one string token by another in a
 * valid JSON text gives a valid JSON text that parses to the same value with that one string
 * changed, so such an event means exactly "append this text": decoding, SSE parsing and
 * `JSON.parse` are all skipped. Anything else takes the full path.
 *
 * @module
 */
import { Buffer } from 'node:buffer'

/**
 * Receives a recognised delta: append `text` (possibly empty: then nothing, as on the full path)
 * to the open `kind` block.
 *
 * @internal
 */
export type AppendDelta = (kind: 'text' | 'reasoning', text: string) => void

/**
 * The learned event shapes of one response body.
 *
 * @internal
 */
export interface DeltaTemplates {
  /**
   * Reads one SSE event, given as body bytes, through a learned shape.
   *
   * @param bytes - body bytes holding the event
   * @param start - where the event starts (just after the previous blank line)
   * @param end - where its terminating `\n\n` starts (no `\n\n` lies in between)
   * @param append - called with the delta the event carries when a shape fits
   * @returns whether a shape fit (else take the full path)
   */
  match(bytes: Buffer, start: number, end: number, append: AppendDelta): boolean
  /**
   * Learns the shape of a fully parsed event when it is a one-line lone text delta; otherwise
   * does nothing.
   *
   * @param data - the event's data, verbatim
   * @param event - `JSON.parse(data)`, an object
   */
  learn(data: string, event: Readonly<Record<string, unknown>>): void
}

interface Template {
  /** `data: ` and the data before the token, as UTF-8. */
  readonly before: Buffer
  /** The data after the token, as UTF-8. */
  readonly after: Buffer
  /** The smallest length of a matching event: `before`, `""`, `after`. */
  readonly minLength: number
  readonly kind: 'text' | 'reasoning'
}

/** The delta fields that carry text, and the block each feeds (translate-stream's `choice`). */
const TEXT_FIELDS = Object.freeze([
  ['content', 'text'],
  ['reasoning_content', 'reasoning'],
  ['reasoning', 'reasoning'],
] as const)

/** Shapes kept at once: a reasoning and a content shape, with room for a provider's variants. */
const MAX_TEMPLATES = 4
/** Learned shapes that never matched before learning stops for the body (a provider whose every event differs). */
const MAX_IDLE_LEARNS = 8
/** One JSON string token: no raw quote, backslash or control character except valid escapes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids raw control characters in a string; this refuses them
const STRING_TOKEN = /^"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"$/
const PROBE = 'yoke\u2063probe'
type JsonRecord = Readonly<Record<string, unknown>>

function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined
}

/** The one text field of a lone text-delta event (and its delta), else `undefined`. */
function loneTextField(
  event: JsonRecord,
): { readonly field: string; readonly kind: 'text' | 'reasoning'; readonly value: string } | undefined {
  if ((event['error'] !== undefined && event['error'] !== null) || asRecord(event['usage']) !== undefined)
    return undefined
  const choices = event['choices']
  if (!Array.isArray(choices) || choices.length !== 1) return undefined
  const entry = asRecord(choices[0])
  if (entry === undefined || (entry['index'] !== undefined && entry['index'] !== 0)) return undefined
  if (typeof entry['finish_reason'] === 'string' && entry['finish_reason'] !== '') return undefined
  const delta = asRecord(entry['delta'])
  if (delta === undefined || Array.isArray(delta['tool_calls'])) return undefined
  let found: { readonly field: string; readonly kind: 'text' | 'reasoning'; readonly value: string } | undefined
  for (const [field, kind] of TEXT_FIELDS) {
    const value = delta[field]
    if (typeof value !== 'string') continue
    // Exactly one string among the text fields, so an empty replacement means "nothing" here too.
    if (found !== undefined || value === '') return undefined
    found = { field, kind, value }
  }
  return found
}

/**
 * Creates the learned shapes of one response body. A shape is learned from a fully parsed event
 * whose only model-visible content is one non-empty text field (no error, usage, finish reason or
 * tool call) on one line, when that string's JSON text occurs once in the event and a probe put
 * in its place parses back into the same field. It then matches every event whose bytes are
 * `data: `, the same data around one valid JSON string token, and the blank line. (A line written
 * as `data:` without the space, or with other fields, never matches: it takes the full path.)
 *
 * @returns the shapes, empty
 * @internal
 */
export function createDeltaTemplates(): DeltaTemplates {
  const templates: Template[] = []
  let idleLearns = 0

  return {
    match(bytes, start, end, append) {
      for (let index = 0; index < templates.length; index++) {
        const template = templates[index] as Template
        const tokenStart = start + template.before.length
        const tokenEnd = end - template.after.length
        if (end - start < template.minLength) continue
        if (bytes.compare(template.before, 0, template.before.length, start, tokenStart) !== 0) continue
        if (bytes.compare(template.after, 0, template.after.length, tokenEnd, end) !== 0) continue
        // Decoding the token alone gives what decoding the line would: it starts and ends at an ASCII quote.
        // (A U+FFFD may stand for bytes that are not UTF-8: the full path's decoder has the last word then.)
        const token = bytes.toString('utf8', tokenStart, tokenEnd)
        if (!STRING_TOKEN.test(token) || token.includes('\uFFFD')) continue
        idleLearns = 0
        append(template.kind, token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1))
        return true
      }
      return false
    },
    learn(data, event) {
      // A shape is matched against one `data:` line: data of several lines (or with a CR) never fits.
      if (idleLearns >= MAX_IDLE_LEARNS || data.includes('\n') || data.includes('\r')) return
      const lone = loneTextField(event)
      if (lone === undefined) return
      const token = JSON.stringify(lone.value)
      const at = data.indexOf(token)
      if (at < 0 || data.indexOf(token, at + 1) >= 0) return
      const before = data.slice(0, at)
      const after = data.slice(at + token.length)
      let probed: unknown
      try {
        probed = JSON.parse(`${before}${JSON.stringify(PROBE)}${after}`)
      } catch {
        return
      }
      const probe = asRecord(probed)
      const probeLone = probe === undefined ? undefined : loneTextField(probe)
      if (probeLone?.field !== lone.field || probeLone.value !== PROBE) return
      idleLearns++
      if (templates.length === MAX_TEMPLATES) templates.pop()
      const beforeBytes = Buffer.from(`data: ${before}`, 'utf8')
      const afterBytes = Buffer.from(after, 'utf8')
      templates.unshift({
        before: beforeBytes,
        after: afterBytes,
        minLength: beforeBytes.length + 2 + afterBytes.length,
        kind: lone.kind,
      })
    },
  }
}
