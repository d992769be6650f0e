/**
 * The stream parts that no Yoke content block holds: provider-executed tool calls and their
 * results, files, reasoning files, custom parts, sources, warnings and response metadata. They go
 * into the call's {@link ReplayLog}, checked first: a part that is not what its specification says
 * ends the call as a `MALFORMED_RESPONSE` naming it.
 *
 * @module
 */
import type { JsonObject, JsonValue } from '../session/json-value.js'
import type { AiSdkFileData } from './ai-sdk-message-state.js'
import { jsonCopy, type ReplayLog, mergeMetadata, metadataJson } from './replay-log.js'

type Part = Readonly<Record<string, unknown>>
type Malformed = (message: string, detail: Readonly<Record<string, string>>) => void

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** `{ providerMetadata }` when the part has some, to spread into a logged part. */
function withMetadata(part: Part): { readonly providerMetadata?: JsonObject } {
  const providerMetadata = metadataJson(part['providerMetadata'])
  return providerMetadata === undefined ? {} : { providerMetadata }
}

/**
 * File data of any version as logged: a base64 string and bytes (v2, v3) and `{ type: 'data' }`
 * (v4) become base64; a `URL` and `{ type: 'url' }` (v4) its text.
 */
function fileData(data: unknown): AiSdkFileData | undefined {
  if (typeof data === 'string') return { type: 'data', data }
  if (data instanceof Uint8Array) return { type: 'data', data: Buffer.from(data).toString('base64') }
  if (data instanceof URL) return { type: 'url', url: data.href }
  if (typeof data !== 'object' || data === null) return undefined
  const tagged = data as Part
  if (tagged['type'] === 'data') return fileData(tagged['data']) as AiSdkFileData | undefined
  if (tagged['type'] === 'url') {
    const url = tagged['url']
    if (url instanceof URL) return { type: 'url', url: url.href }
    if (typeof url === 'string') return { type: 'url', url }
  }
  return undefined
}

/**
 * The handlers of one call's extra parts.
 *
 * @internal
 */
export interface ExtraParts {
  /** Whether `id` is a provider-executed call whose input is streaming or was sent. */
  isProviderCall(id: string): boolean
  /** A `tool-input-start` with `providerExecuted: true`. */
  providerInputStart(id: string, part: Part): void
  /** Metadata on a provider call's `tool-input-delta` or `tool-input-end`. */
  providerInputNote(id: string, part: Part): void
  /** The final `tool-call` of a provider-executed call (its id, name and input already checked). */
  providerCall(id: string, name: string, input: string, part: Part): void
  /** A `tool-result` part. */
  toolResult(part: Part): void
  /** A `file` or `reasoning-file` part. */
  file(part: Part): void
  /** A `custom` part (v4). */
  custom(part: Part): void
  /** A `source` part. */
  source(part: Part): void
  /** The `stream-start` part. */
  streamStart(part: Part): void
  /** A `response-metadata` part. */
  responseMetadata(part: Part): void
}

/**
 * Creates the handlers for one call.
 *
 * @param log - the call's replay log
 * @param malformed - ends the call with a `MALFORMED_RESPONSE`
 * @param isClientCall - whether an id names a tool call Yoke runs
 * @returns the handlers
 * @internal
 */
export function createExtraParts(
  log: ReplayLog,
  malformed: Malformed,
  isClientCall: (id: string) => boolean,
): ExtraParts {
  /** Provider calls by id: the metadata of their input parts until the final `tool-call`. */
  const calls = new Map<string, { metadata: Record<string, Record<string, unknown>> | undefined; done: boolean }>()
  const results = new Set<string>()

  return {
    isProviderCall: (id) => calls.has(id),
    providerInputStart(id, part) {
      if (id === '' || nonEmpty(part['toolName']) === undefined) {
        malformed('the provider sent a tool-input-start part without an id or a toolName', { part: 'tool-input-start' })
        return
      }
      if (calls.has(id) || isClientCall(id)) {
        malformed(`the provider started tool input id "${id}" twice`, { part: 'tool-input-start', id })
        return
      }
      calls.set(id, { metadata: mergeMetadata(undefined, part['providerMetadata']), done: false })
      log.reserve(`call:${id}`)
    },
    providerInputNote(id, part) {
      const call = calls.get(id)
      if (call !== undefined) call.metadata = mergeMetadata(call.metadata, part['providerMetadata'])
    },
    providerCall(id, name, input, part) {
      const call = calls.get(id)
      if (call?.done === true || (call === undefined && isClientCall(id))) {
        malformed(`the provider sent tool call id "${id}" twice`, { part: 'tool-call', id })
        return
      }
      const providerMetadata = metadataJson(mergeMetadata(call?.metadata, part['providerMetadata']))
      calls.set(id, { metadata: undefined, done: true })
      log.extra(
        {
          type: 'tool-call',
          toolCallId: id,
          toolName: name,
          input,
          providerExecuted: true,
          ...(part['dynamic'] === true && { dynamic: true }),
          ...(providerMetadata !== undefined && { providerMetadata }),
        },
        `call:${id}`,
      )
    },
    toolResult(part) {
      const id = nonEmpty(part['toolCallId'])
      const name = nonEmpty(part['toolName'])
      // v2 results may be any value; `undefined` is what the AI SDK itself sends back as null.
      const result = part['result'] === undefined ? null : jsonCopy(part['result'])
      if (id === undefined || name === undefined || result === undefined) {
        malformed('the provider sent a tool-result part without a toolCallId, a toolName or a JSON result', {
          part: 'tool-result',
        })
        return
      }
      if (isClientCall(id)) {
        malformed(`the provider sent a result for tool call id "${id}", which Yoke runs itself`, {
          part: 'tool-result',
          id,
        })
        return
      }
      // Preliminary results replace each other until the final one: only that one is history.
      if (part['preliminary'] === true) return
      if (results.has(id)) {
        malformed(`the provider sent a result for tool call id "${id}" twice`, { part: 'tool-result', id })
        return
      }
      results.add(id)
      log.extra({
        type: 'tool-result',
        toolCallId: id,
        toolName: name,
        result,
        ...(part['isError'] === true && { isError: true }),
        ...(part['dynamic'] === true && { dynamic: true }),
        ...withMetadata(part),
      })
    },
    file(part) {
      const type = part['type'] === 'reasoning-file' ? 'reasoning-file' : 'file'
      const mediaType = nonEmpty(part['mediaType'])
      const data = fileData(part['data'])
      if (mediaType === undefined || data === undefined) {
        malformed(`the provider sent a ${type} part without a mediaType or with data that is neither bytes nor a URL`, {
          part: type,
        })
        return
      }
      log.extra({ type, mediaType, data, ...withMetadata(part) })
    },
    custom(part) {
      const kind = nonEmpty(part['kind'])
      if (kind === undefined) {
        malformed('the provider sent a custom part without a kind', { part: 'custom' })
        return
      }
      log.extra({ type: 'custom', kind, ...withMetadata(part) })
    },
    source(part) {
      const { type: _type, ...fields } = part
      const copy = jsonCopy(fields)
      if (copy === undefined || typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
        malformed('the provider sent a source part that is not JSON', { part: 'source' })
        return
      }
      log.source(copy as JsonObject)
    },
    streamStart(part) {
      const warnings = jsonCopy(part['warnings'])
      if (Array.isArray(warnings)) log.warnings(warnings as readonly JsonValue[])
    },
    responseMetadata(part) {
      const { type: _type, ...fields } = part
      // A `timestamp` is a `Date`: the copy keeps its ISO text.
      const copy = jsonCopy(fields)
      if (copy !== undefined && typeof copy === 'object' && copy !== null && !Array.isArray(copy)) {
        log.response(copy as JsonObject)
      }
    },
  }
}
