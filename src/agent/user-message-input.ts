import { InvalidMessageError } from '../errors/agent-errors.js'
import { ErrorCode } from '../errors/codes.js'
import { SessionEventError } from '../errors/session-event-error.js'
import type { ContentBlock } from '../session/content-block.js'
import type { JsonObject } from '../session/json-value.js'
import { type MessageSource, type UserMessage, userMessageSchema } from '../session/message.js'
import { payloadIssues } from '../session/payload-issues.js'
import { fieldPath } from '../errors/issue.js'
import { snapshotJson } from '../session/snapshot/snapshot-json.js'

/**
 * What `send`, `followup`, `steer`, `inject` and `inbox.replace` take: a string
 * (one text block) or the content blocks and an optional source. Only what a `user/message`
 * accepts passes: text and image blocks, a `user` or `plugin` source.
 */
export type UserMessageInput =
  | string
  | {
      /** The blocks, in order: text and image blocks. */
      readonly content: readonly ContentBlock[]
      /**
       * Who wrote it: `{ kind: 'user' }` or `{ kind: 'plugin', plugin, form? }`.
       *
       * @default { kind: 'user' }
       */
      readonly source?: MessageSource
    }

const inputKeys: ReadonlySet<string> = new Set(['content', 'source'])
/** One segment of a `snapshotJson` path: `.name`, `[0]`, `["key"]` or `[Symbol(…)]`. */
const pathSegmentSource = /\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\[(Symbol\(.*?\))\]/.source

/**
 * Turns an input into the frozen {@link UserMessage} the inbox queues. The result
 * is a lossless-JSON snapshot, deep-frozen; the caller's object is read once (each property and
 * slot, as `snapshotJson` does), never frozen and never referenced, so mutating it later changes
 * nothing. The message is checked with the `user/message` schema, so whatever this accepts the
 * session accepts.
 *
 * @example
 * ```ts
 * normalizeUserMessage('hi', 'm1')
 * // { id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }
 * normalizeUserMessage({ content: [{ type: 'text', text: 1 }] }, 'm2') // throws, field 'content[0].text'
 * ```
 *
 * @param input - a string or `{ content, source? }`
 * @param id - the message id (from the harness id source)
 * @returns the deep-frozen message
 * @throws {@link InvalidMessageError} (`INVALID_MESSAGE`) naming the first offending `field`
 *   (`''` for the input itself, `'content[0].text'`, `'source.plugin'`, `'id'`, …) and its `value`;
 *   a throwing getter's error propagates unchanged
 */
export function normalizeUserMessage(input: UserMessageInput, id: string): UserMessage {
  const candidate = typeof input === 'string' ? textMessage(input, id) : objectMessage(input as unknown, id)
  const issue = payloadIssues(userMessageSchema, candidate)?.[0]
  if (issue !== undefined) {
    const field = fieldPath(issue.path)
    throw new InvalidMessageError({ field, value: dataAt(candidate, issue.path), reason: reasonOf(issue.message) })
  }
  return Object.freeze(candidate) as unknown as UserMessage
}

function textMessage(text: string, id: string): Record<string, unknown> {
  const content = Object.freeze([Object.freeze({ type: 'text', text })])
  return { id, role: 'user', content, source: Object.freeze({ kind: 'user' }) }
}

function objectMessage(input: unknown, id: string): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidMessageError({
      field: '',
      value: input,
      reason: 'must be a string or a { content, source? } object',
    })
  }
  let snapshot: JsonObject
  try {
    snapshot = snapshotJson(input, '') as JsonObject
  } catch (error) {
    if (!SessionEventError.is(error) || error.code !== ErrorCode.NOT_JSON || error.path === undefined) throw error
    throw new InvalidMessageError({
      field: fieldOf(error.path),
      value: rawValueAt(input, error.path),
      reason: `is not lossless JSON (${error.reason ?? 'unsupported value'})`,
      cause: error,
    })
  }
  for (const key of Object.keys(snapshot)) {
    if (!inputKeys.has(key)) {
      throw new InvalidMessageError({
        field: fieldPath([key]),
        value: snapshot[key],
        reason: 'is not a message input field (only content and source are)',
      })
    }
  }
  const source = Object.hasOwn(snapshot, 'source') ? snapshot['source'] : Object.freeze({ kind: 'user' })
  return { id, role: 'user', content: snapshot['content'], source }
}

/** `'.content[0].text'` → `'content[0].text'`. */
/** A snapshot error's path starts with a dot (`.content[0]`); a field is named without it. */
function fieldOf(path: string): string {
  return path.startsWith('.') ? path.slice(1) : path
}

function reasonOf(message: string): string {
  if (message.startsWith('must ')) return message
  if (message.startsWith('unknown key')) return `is not allowed (${message})`
  return `is invalid (${message})`
}

/** The value at `path` in the (plain JSON) candidate; `undefined` when a step is missing. */
function dataAt(root: unknown, path: readonly (string | number)[]): unknown {
  let value = root
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<string | number, unknown>)[part]
  }
  return value
}

/**
 * The value a `snapshotJson` error path names in the caller's input, for the error only. Follows
 * data properties alone, so no getter runs a second time; `undefined` when it cannot be reached.
 */
function rawValueAt(root: unknown, path: string): unknown {
  const pathSegment = new RegExp(pathSegmentSource, 'y')
  let value = root
  while (pathSegment.lastIndex < path.length) {
    const match = pathSegment.exec(path)
    if (match === null || match[4] !== undefined) return undefined
    const key = match[1] ?? match[2] ?? (JSON.parse(match[3] as string) as string)
    if (typeof value !== 'object' || value === null) return undefined
    const descriptor = Object.getOwnPropertyDescriptor(value, key)
    if (descriptor === undefined || !('value' in descriptor)) return undefined
    value = descriptor.value
  }
  return value
}
