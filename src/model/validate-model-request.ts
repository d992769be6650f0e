import type { z } from 'zod'
import { isAbortSignal } from '../kernel/is-abort-signal.js'
import { dottedPath, valueAt } from '../errors/issue.js'
import type { JsonValue } from '../session/json-value.js'
import type { LlmFailure } from '../session/llm-failure.js'
import { assistantMessageSchema, toolResultMessageSchema, userMessageSchema } from '../session/message.js'
import { isAssistantMessage, isToolResultMessage, isUserMessage } from '../session/fast-payload-checks.js'
import { toolSchemaSchema } from '../session/request-header.js'
import { isJsonValue, snapshotJson } from '../session/snapshot/snapshot-json.js'
import { modelFailure } from './failure-defaults.js'

/** One violation of the model request rules. */
export interface RequestViolation {
  /** The dotted path of the offending field, e.g. `'maxTokens'`, `'messages.0.content'`, `'stop.1'`. */
  readonly field: string
  /** The offending value (`undefined` when the field is missing). */
  readonly value: unknown
  /** What is wrong, e.g. `'must be a positive safe integer'`. */
  readonly message: string
}

/** What a provider id looks like. */
const providerIdPattern = /^[a-z0-9][a-z0-9._-]{0,63}$/
const requestKeys: ReadonlySet<string> = new Set([
  'provider',
  'model',
  'system',
  'messages',
  'tools',
  'toolChoice',
  'responseFormat',
  'maxTokens',
  'temperature',
  'stop',
  'reasoningEffort',
  'metadata',
  'signal',
])
const configKeys: ReadonlySet<string> = new Set([
  'provider',
  'model',
  'reasoningEffort',
  'temperature',
  'maxTokens',
  'stop',
])
const metadataKeys: ReadonlySet<string> = new Set(['sessionId', 'purpose'])
const purposes: ReadonlySet<unknown> = new Set(['conversation', 'compaction', 'title'])
const nonEmpty = 'must be a non-empty string'

/**
 * Whether `value` is a provider id: `^[a-z0-9][a-z0-9._-]{0,63}$`.
 *
 * @param value - anything
 * @returns `true` for a provider id
 */
export function isProviderId(value: unknown): value is string {
  return typeof value === 'string' && providerIdPattern.test(value)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function violation(field: string, value: unknown, message: string): RequestViolation {
  return { field, value, message }
}

/**
 * Checks one call-config field (`provider`, `model`, `maxTokens`, `temperature`, `stop`,
 * `reasoningEffort`) by the model request rules; `undefined` counts as absent.
 *
 * @param key - the field name
 * @param value - its value
 * @returns the violation, or `undefined` when the value is fine
 * @internal
 */
export function checkCallField(key: string, value: unknown): RequestViolation | undefined {
  if (value === undefined)
    return key === 'provider' || key === 'model' ? violation(key, value, 'is required') : undefined
  switch (key) {
    case 'provider':
    case 'model':
    case 'reasoningEffort':
      return typeof value === 'string' && value.length > 0 ? undefined : violation(key, value, nonEmpty)
    case 'maxTokens':
      return Number.isSafeInteger(value) && (value as number) > 0
        ? undefined
        : violation(key, value, 'must be a positive safe integer')
    case 'temperature':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 2
        ? undefined
        : violation(key, value, 'must be a finite number in [0, 2]')
    case 'stop': {
      if (!Array.isArray(value)) return violation(key, value, 'must be an array of non-empty strings')
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index]
        if (typeof item !== 'string' || item.length === 0) return violation(`stop.${index}`, item, nonEmpty)
      }
      return undefined
    }
    default:
      return undefined
  }
}

function firstUnknownKey(
  record: Record<string, unknown>,
  known: ReadonlySet<string>,
  prefix: string,
): RequestViolation | undefined {
  for (const key of Object.keys(record)) {
    if (!known.has(key)) return violation(`${prefix}${key}`, record[key], 'is not a known field')
  }
  return undefined
}

function schemaViolation(
  schema: z.ZodType,
  value: unknown,
  field: string,
  accepts?: (value: unknown) => boolean,
): RequestViolation | undefined {
  // A one-sided hand-written check (fast-payload-checks.ts): only values the schema accepts pass it.
  if (accepts?.(value) === true && isJsonValue(value)) return undefined
  const result = schema.safeParse(value)
  if (result.success) {
    return isJsonValue(value) ? undefined : violation(field, value, 'is not lossless JSON')
  }
  const issue = result.error.issues[0] as z.core.$ZodIssue
  const path: PropertyKey[] = [...issue.path]
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0])
  const relative = dottedPath(path.map((part) => (typeof part === 'number' ? part : String(part))))
  return violation(relative === '' ? field : `${field}.${relative}`, valueAt(value, path), issue.message)
}

function messageSchemaOf(message: unknown): z.ZodType | string {
  if (!isRecord(message)) return 'must be a message object'
  if (message['role'] === 'assistant') return assistantMessageSchema
  if (message['role'] !== 'user') return 'must be "user" or "assistant"'
  return isRecord(message['source']) && message['source']['kind'] === 'tool'
    ? toolResultMessageSchema
    : userMessageSchema
}

function checkMessages(
  messages: unknown,
  verified: WeakSet<object> | undefined,
  knownPrefix: number,
): RequestViolation | undefined {
  if (!Array.isArray(messages)) return violation('messages', messages, 'must be an array of messages')
  for (let index = knownPrefix; index < messages.length; index++) {
    const message: unknown = messages[index]
    if (verified !== undefined && typeof message === 'object' && message !== null && verified.has(message)) continue
    const schema = messageSchemaOf(message)
    if (typeof schema === 'string') {
      const field = isRecord(message) ? `messages.${index}.role` : `messages.${index}`
      return violation(field, isRecord(message) ? message['role'] : message, schema)
    }
    const accepts =
      schema === assistantMessageSchema
        ? isAssistantMessage
        : schema === userMessageSchema
          ? isUserMessage
          : isToolResultMessage
    const problem = schemaViolation(schema, message, `messages.${index}`, accepts)
    if (problem !== undefined) return problem
  }
  return undefined
}

function checkTools(tools: unknown, verified: WeakSet<object> | undefined): RequestViolation | undefined {
  if (tools === undefined) return undefined
  if (!Array.isArray(tools)) return violation('tools', tools, 'must be an array of tool schemas')
  const names = new Set<unknown>()
  for (let index = 0; index < tools.length; index++) {
    const tool: unknown = tools[index]
    const known = verified !== undefined && typeof tool === 'object' && tool !== null && verified.has(tool)
    if (!known) {
      const problem = schemaViolation(toolSchemaSchema, tool, `tools.${index}`)
      if (problem !== undefined) return problem
    }
    const name = (tool as { readonly name: string }).name
    if (names.has(name)) return violation(`tools.${index}.name`, name, `duplicate tool name "${name}"`)
    names.add(name)
  }
  return undefined
}

function checkMetadata(metadata: unknown): RequestViolation | undefined {
  if (!isRecord(metadata)) return violation('metadata', metadata, 'must be an object { purpose, sessionId? }')
  const unknownKey = firstUnknownKey(metadata, metadataKeys, 'metadata.')
  if (unknownKey !== undefined) return unknownKey
  const sessionId = metadata['sessionId']
  if (sessionId !== undefined && typeof sessionId !== 'string')
    return violation('metadata.sessionId', sessionId, 'must be a string')
  const purpose = metadata['purpose']
  return purposes.has(purpose)
    ? undefined
    : violation('metadata.purpose', purpose, 'must be "conversation", "compaction" or "title"')
}

/**
 * Checks a model request against every model request rule, without I/O: `provider`, `model`
 * non-empty; `messages` valid messages (user or assistant) and lossless JSON; `system` a string;
 * `tools` valid tool schemas with unique names; `maxTokens` a positive safe integer; `temperature`
 * finite in [0, 2]; `stop` non-empty strings; `reasoningEffort` non-empty; `metadata` `{ purpose,
 * sessionId? }` with a known purpose; `signal` an `AbortSignal`; no other key. An optional field set
 * to `undefined` counts as absent.
 *
 * @param request - the candidate request
 * @param verified - messages and tool schemas already known valid and deep-frozen (skipped)
 * @param knownPrefix - how many leading messages are known valid and deep-frozen (skipped without a lookup)
 * @returns the first violation, or `undefined` for a valid request
 */
export function validateModelRequest(
  request: unknown,
  verified?: WeakSet<object>,
  knownPrefix = 0,
): RequestViolation | undefined {
  if (!isRecord(request)) return violation('request', request, 'must be a request object')
  const unknownKey = firstUnknownKey(request, requestKeys, '')
  if (unknownKey !== undefined) return unknownKey
  for (const key of ['provider', 'model'] as const) {
    const problem = checkCallField(key, request[key])
    if (problem !== undefined) return problem
  }
  const system = request['system']
  if (system !== undefined && typeof system !== 'string') return violation('system', system, 'must be a string')
  const problem =
    checkMessages(request['messages'], verified, knownPrefix) ??
    checkTools(request['tools'], verified) ??
    checkCallField('maxTokens', request['maxTokens']) ??
    checkCallField('temperature', request['temperature']) ??
    checkCallField('stop', request['stop']) ??
    checkCallField('reasoningEffort', request['reasoningEffort']) ??
    checkMetadata(request['metadata'])
  if (problem !== undefined) return problem
  const signal = request['signal']
  return isAbortSignal(signal) ? undefined : violation('signal', signal, 'must be an AbortSignal')
}

/**
 * Checks a call config (`prepareCall`) by the same rules: `provider`, `model`
 * non-empty, `maxTokens`, `temperature`, `stop`, `reasoningEffort` as for a request, no other key.
 *
 * @param config - the candidate config
 * @returns the first violation, or `undefined` for a valid config
 */
export function validateCallConfig(config: unknown): RequestViolation | undefined {
  if (!isRecord(config)) return violation('config', config, 'must be a call config object')
  const unknownKey = firstUnknownKey(config, configKeys, '')
  if (unknownKey !== undefined) return unknownKey
  for (const key of ['provider', 'model', 'maxTokens', 'temperature', 'stop', 'reasoningEffort']) {
    const problem = checkCallField(key, config[key])
    if (problem !== undefined) return problem
  }
  return undefined
}

function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return `${value}n`
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value)
    case 'symbol':
      return value.toString()
    case 'function':
      return '[function]'
    default:
      return Array.isArray(value) ? '[non-JSON array]' : '[non-JSON object]'
  }
}

/**
 * The offending value as JSON for a failure's `detail`: a frozen copy when it is lossless JSON,
 * else a short description (`'NaN'`, `'1n'`, `'[function]'`, `'[non-JSON object]'`).
 *
 * @internal
 */
export function jsonDetailValue(value: unknown): JsonValue {
  try {
    if (isJsonValue(value)) return snapshotJson(value)
  } catch {
    // A throwing getter: fall through to the description.
  }
  return describeValue(value)
}

/**
 * The `INVALID_REQUEST` failure of a violation (`phase: 'pre-request'`, `detail: { field, value }`;
 * `value` omitted when the field is missing).
 *
 * @param found - the violation
 * @returns the frozen failure
 */
export function invalidRequestFailure(found: RequestViolation): LlmFailure {
  const detail =
    found.value === undefined ? { field: found.field } : { field: found.field, value: jsonDetailValue(found.value) }
  return modelFailure('INVALID_REQUEST', `invalid model request: ${found.field} ${found.message}`, 'pre-request', {
    detail: Object.freeze(detail),
  })
}
