/**
 * Hand-written acceptance checks for the hottest core payloads and stream chunks. Each check is
 * one-sided: `true` only for values the zod schema accepts (so no issue is ever missed); `false`
 * means "not shown valid here", and the caller runs the zod schema, which gives the exact issues.
 * Checks expect lossless JSON (a {@link snapshotJson} copy): plain objects, no `undefined`.
 *
 * @module
 * @internal
 */
import { MAX_CALL_ID_LENGTH, MAX_MESSAGE_ID_LENGTH } from './schema-primitives.js'

type Record_ = { readonly [key: string]: unknown }

function isObject(value: unknown): value is Record_ {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isPositive(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1
}

function isNonNegative(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function isNonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0
}

function isCallId(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_CALL_ID_LENGTH
}

function isMessageId(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_MESSAGE_ID_LENGTH
}

/** Whether `value` has exactly `size` own keys (the caller checks each expected key is valid). */
function hasKeyCount(value: Record_, size: number): boolean {
  let count = 0
  for (const _key in value) count++
  return count === size
}

/** `{ turn, step }` plus exactly `extra` more keys; `turn` and `step` positive safe integers. */
function isStepScoped(value: unknown, extra: number): value is Record_ {
  return isObject(value) && isPositive(value['turn']) && isPositive(value['step']) && hasKeyCount(value, 2 + extra)
}

function isTextBlock(block: Record_): boolean {
  return typeof block['text'] === 'string' && hasKeyCount(block, 2)
}

function isAssistantBlock(value: unknown): boolean {
  if (!isObject(value)) return false
  const type = value['type']
  if (type === 'text' || type === 'reasoning') return isTextBlock(value)
  if (type === 'tool-call') {
    return (
      isCallId(value['id']) &&
      isNonEmpty(value['name']) &&
      typeof value['arguments'] === 'string' &&
      hasKeyCount(value, 4)
    )
  }
  return false
}

/** 0 when `key` is absent, 1 when present and valid, NaN (no key count matches) when invalid. */
function optionalCount(record: Record_, key: string, check: (value: unknown) => boolean): number {
  const value = record[key]
  if (value === undefined) return 0
  return check(value) ? 1 : Number.NaN
}

/** A `TokenUsage` without `raw` (that goes to the schema): the two counts and any of the three optional ones. */
function isTokenUsage(value: unknown): boolean {
  if (!isObject(value) || !isNonNegative(value['inputTokens']) || !isNonNegative(value['outputTokens'])) return false
  const extra =
    optionalCount(value, 'cacheReadTokens', isNonNegative) +
    optionalCount(value, 'cacheWriteTokens', isNonNegative) +
    optionalCount(value, 'reasoningTokens', isNonNegative)
  return hasKeyCount(value, 2 + extra)
}

const blockTypes: ReadonlySet<unknown> = new Set(['text', 'reasoning', 'tool-call'])
const plainFinishReasons: ReadonlySet<unknown> = new Set(['stop', 'tool-calls', 'max-tokens'])

/**
 * Whether `value` is shown to be a valid `StreamChunk` (every shape but `usage` and failing
 * `finish` chunks, which go to the schema).
 *
 * @param value - lossless JSON
 * @returns `true` only when `streamChunkSchema` accepts it
 */
export function isStreamChunkFast(value: unknown): boolean {
  if (!isObject(value)) return false
  switch (value['type']) {
    case 'block-start':
      return isNonNegative(value['index']) && blockTypes.has(value['blockType']) && hasKeyCount(value, 3)
    case 'text-delta':
    case 'reasoning-delta':
      return isNonNegative(value['index']) && typeof value['text'] === 'string' && hasKeyCount(value, 3)
    case 'tool-call-delta': {
      if (!isNonNegative(value['index']) || !isCallId(value['id']) || typeof value['argumentsDelta'] !== 'string')
        return false
      const name = value['name']
      return name === undefined ? hasKeyCount(value, 4) : isNonEmpty(name) && hasKeyCount(value, 5)
    }
    case 'block-end':
      return isNonNegative(value['index']) && isAssistantBlock(value['block']) && hasKeyCount(value, 3)
    case 'usage':
      return isTokenUsage(value['usage']) && hasKeyCount(value, 2)
    case 'finish': {
      if (!plainFinishReasons.has(value['reason'])) return false
      const provider = value['providerFinishReason']
      return provider === undefined ? hasKeyCount(value, 2) : typeof provider === 'string' && hasKeyCount(value, 3)
    }
    default:
      return false
  }
}

function isUserContent(content: unknown): boolean {
  if (!Array.isArray(content)) return false
  for (const block of content) if (!isObject(block) || block['type'] !== 'text' || !isTextBlock(block)) return false
  return true
}

/**
 * Whether `value` is shown to be a valid `UserMessage` (text content, a `user` source).
 *
 * @param value - a candidate message
 * @returns `true` only when `userMessageSchema` accepts it
 */
export function isUserMessage(value: unknown): boolean {
  if (!isObject(value) || value['role'] !== 'user' || !isMessageId(value['id']) || !hasKeyCount(value, 4)) return false
  const source = value['source']
  return isObject(source) && source['kind'] === 'user' && hasKeyCount(source, 1) && isUserContent(value['content'])
}

/**
 * Whether `value` is shown to be a valid `AssistantMessage` (no `replayState` on its source).
 *
 * @param value - a candidate message
 * @returns `true` only when `assistantMessageSchema` accepts it
 */
export function isAssistantMessage(value: unknown): boolean {
  if (!isObject(value) || value['role'] !== 'assistant' || !isMessageId(value['id']) || !hasKeyCount(value, 4))
    return false
  const source = value['source']
  if (
    !isObject(source) ||
    source['kind'] !== 'model' ||
    !isNonEmpty(source['provider']) ||
    !isNonEmpty(source['model'])
  )
    return false
  if (!hasKeyCount(source, 3)) return false
  const content = value['content']
  if (!Array.isArray(content)) return false
  for (const block of content) if (!isAssistantBlock(block)) return false
  return true
}

/**
 * Whether `value` is shown to be a valid `ToolResultMessage` (text content only).
 *
 * @param value - a candidate message
 * @returns `true` only when `toolResultMessageSchema` accepts it
 */
export function isToolResultMessage(value: unknown): boolean {
  if (!isObject(value) || value['role'] !== 'user' || !isMessageId(value['id']) || !hasKeyCount(value, 4)) return false
  const source = value['source']
  if (!isObject(source) || source['kind'] !== 'tool' || !isCallId(source['callId']) || !hasKeyCount(source, 2))
    return false
  const content = value['content']
  if (!Array.isArray(content) || content.length !== 1) return false
  const block: unknown = content[0]
  if (!isObject(block) || block['type'] !== 'tool-result' || block['toolCallId'] !== source['callId']) return false
  const isError = block['isError']
  if (isError !== undefined && typeof isError !== 'boolean') return false
  return hasKeyCount(block, isError === undefined ? 3 : 4) && isUserContent(block['content'])
}

function isCallConfig(value: unknown): boolean {
  if (!isObject(value) || !isNonEmpty(value['provider']) || !isNonEmpty(value['model'])) return false
  const extra =
    optionalCount(value, 'reasoningEffort', isNonEmpty) +
    optionalCount(
      value,
      'temperature',
      (temperature) => typeof temperature === 'number' && Number.isFinite(temperature) && temperature >= 0,
    ) +
    optionalCount(value, 'maxTokens', isPositive) +
    optionalCount(value, 'stop', (stop) => Array.isArray(stop) && stop.every((item) => typeof item === 'string'))
  return hasKeyCount(value, 2 + extra)
}

/** A header without `adapterDefaults` (those go to the schema): config, optional system and tools with unique names. */
function isRequestHeader(value: unknown): boolean {
  if (!isObject(value) || !isCallConfig(value['config'])) return false
  let keys = 1 + optionalCount(value, 'system', (system) => typeof system === 'string')
  const tools = value['tools']
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return false
    const names = new Set<unknown>()
    for (const tool of tools) {
      if (
        !isObject(tool) ||
        !isNonEmpty(tool['name']) ||
        typeof tool['description'] !== 'string' ||
        !isObject(tool['parameters'])
      )
        return false
      if (!hasKeyCount(tool, 3) || names.has(tool['name'])) return false
      names.add(tool['name'])
    }
    keys++
  }
  return hasKeyCount(value, keys)
}

const headerReasons: ReadonlySet<unknown> = new Set(['initial', 'resume', 'change'])

const inboxTargets: ReadonlySet<unknown> = new Set(['next-turn', 'next-step'])

function isInboxSpliced(value: unknown): boolean {
  if (!isObject(value) || !inboxTargets.has(value['target']) || !isNonNegative(value['start'])) return false
  let keys = 3
  const removed = value['removedCount']
  if (removed !== undefined) {
    if (!isPositive(removed)) return false
    keys++
  }
  const outcome = value['outcome']
  if (outcome !== undefined) {
    if (outcome !== 'canceled') return false
    keys++
  }
  const inserted = value['inserted']
  if (!Array.isArray(inserted) || !hasKeyCount(value, keys)) return false
  for (const message of inserted) if (!isUserMessage(message)) return false
  return true
}

/**
 * The fast checks by core event type. Each is one-sided (see the module comment); a type not
 * listed always goes to its schema.
 */
export const fastPayloadChecks: ReadonlyMap<string, (data: unknown) => boolean> = new Map<
  string,
  (data: unknown) => boolean
>([
  ['turn/start', (data) => isObject(data) && isPositive(data['turn']) && hasKeyCount(data, 1)],
  [
    'turn/end',
    (data) => {
      if (!isObject(data) || !isPositive(data['turn']) || !hasKeyCount(data, 2)) return false
      const reason = data['reason']
      return isObject(reason) && reason['kind'] === 'completed' && hasKeyCount(reason, 1)
    },
  ],
  ['step/start', (data) => isStepScoped(data, 0)],
  ['step/end', (data) => isStepScoped(data, 0)],
  ['assistant/chunk', (data) => isStepScoped(data, 1) && isStreamChunkFast(data['chunk'])],
  [
    'assistant/message',
    (data) => {
      if (!isObject(data)) return false
      const extra =
        optionalCount(data, 'usage', isTokenUsage) +
        optionalCount(data, 'interrupted', (interrupted) => interrupted === true)
      return isStepScoped(data, 1 + extra) && isAssistantMessage(data['message'])
    },
  ],
  [
    'tool/call',
    (data) =>
      isStepScoped(data, 3) &&
      isCallId(data['callId']) &&
      isNonEmpty(data['name']) &&
      typeof data['arguments'] === 'string',
  ],
  ['tool/result', (data) => isStepScoped(data, 1) && isToolResultMessage(data['message'])],
  ['user/message', isUserMessage],
  ['agent/inbox/spliced', isInboxSpliced],
  [
    'request/header',
    (data) =>
      isObject(data) && headerReasons.has(data['reason']) && isRequestHeader(data['header']) && hasKeyCount(data, 2),
  ],
  [
    'request/context',
    (data) => {
      if (!isObject(data) || !isNonEmpty(data['provider']) || !isNonEmpty(data['model'])) return false
      const window = data['contextWindow']
      return window === undefined ? hasKeyCount(data, 2) : isPositive(window) && hasKeyCount(data, 3)
    },
  ],
])
