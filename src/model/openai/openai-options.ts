/**
 * The options of `openaiCompatible` and `deepseek` and their construction-time
 * validation.
 *
 * @module
 */
import { z } from 'zod'
import { InvalidOptionsError } from '../../errors/invalid-options-error.js'
import { type ValidationIssue, valueAt } from '../../errors/issue.js'
import { type Clock, systemClock } from '../../kernel/host-services.js'
import type { ModelInfo } from '../model-adapter.js'

/** An API key: the key itself, or a function resolving it per request (e.g. from a secret store). */
export type ApiKeySource = string | (() => string | Promise<string>)

/** The `fetch` an adapter calls: the global one or any function with its signature. */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>

/** How a request's `reasoningEffort` goes on the wire. */
export type ReasoningStyle = 'openai' | 'deepseek' | 'none'

/**
 * How a request's `responseFormat` goes on the wire: `response_format: { type: 'json_schema' }`
 * with the schema (`'json_schema'`); `response_format: { type: 'json_object' }` plus the schema as
 * an instruction in the system message, for servers with JSON mode but no schemas
 * (`'json_object'`); or the instruction alone, for servers with neither (`'instruction'`).
 */
export type ResponseFormatStyle = 'json_schema' | 'json_object' | 'instruction'

/** Options of {@link openaiCompatible}. Checked at construction. */
export interface OpenAICompatibleOptions {
  /**
   * The API root, an `http(s)` URL; requests go to `<baseURL>/chat/completions` (one trailing `/`
   * of the path trimmed). A query string stays after the joined path, so an Azure deployment URL
   * `https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21` posts to
   * `…/deployments/d/chat/completions?api-version=2024-10-21`.
   */
  readonly baseURL: string
  /**
   * The API key, or a function returning it; resolved per request, never cached. Not with `apiKeyEnv`.
   *
   * @default none (no `authorization` header)
   */
  readonly apiKey?: ApiKeySource | undefined
  /**
   * The environment variable holding the API key, read at request time. Not with `apiKey`.
   *
   * @default none
   */
  readonly apiKeyEnv?: string | undefined
  /**
   * The adapter's `defaultModel`.
   *
   * @default none
   */
  readonly model?: string
  /**
   * The provider route id (`^[a-z0-9][a-z0-9._-]{0,63}$`).
   *
   * @default 'openai-compatible'
   */
  readonly provider?: string
  /**
   * Extra request headers, sent after the adapter's own (so they may override `user-agent`);
   * `authorization` is not allowed (use `apiKey`).
   *
   * @default {}
   */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * How long the connection may stay silent (no byte received) before the call fails `TIMEOUT`.
   *
   * @default 300000
   */
  readonly idleTimeoutMs?: number
  /**
   * The `fetch` to call.
   *
   * @default globalThis.fetch
   */
  readonly fetch?: FetchFunction
  /**
   * What `describeModel` reports, per model id.
   *
   * @default {}
   */
  readonly models?: Readonly<Record<string, ModelInfo>>
  /**
   * How `reasoningEffort` is sent: `reasoning_effort` (`'openai'`), `thinking` plus
   * `reasoning_effort` (`'deepseek'`), or not at all.
   *
   * @default 'openai'
   */
  readonly reasoningStyle?: ReasoningStyle
  /**
   * Send history reasoning back as `reasoning_content`.
   *
   * @default false
   */
  readonly sendReasoning?: boolean
  /**
   * The body field `maxTokens` goes in.
   *
   * @default 'max_tokens'
   */
  readonly maxTokensField?: 'max_tokens' | 'max_completion_tokens'
  /**
   * How `responseFormat` is sent: `response_format` `json_schema`, `json_object` plus an
   * instruction, or the instruction alone (see {@link ResponseFormatStyle}).
   *
   * @default 'json_schema' (deepseek: 'json_object')
   */
  readonly responseFormatStyle?: ResponseFormatStyle
  /**
   * Send `strict: true` with a `json_schema` response format (the provider then enforces the schema
   * exactly, and refuses schemas its strict mode does not support).
   *
   * @default false
   */
  readonly strictJsonSchema?: boolean
  /**
   * The header that carries `metadata.sessionId`, or `false` to send none.
   *
   * @default 'x-session-id'
   */
  readonly sessionIdHeader?: string | false
  /**
   * The clock of the idle watchdog and of `retry-after` HTTP dates.
   *
   * @default the harness clock when the harness calls the adapter, else the system clock
   */
  readonly clock?: Clock
}

/**
 * The options with defaults applied.
 *
 * @internal
 */
export interface ResolvedOpenAIOptions {
  readonly provider: string
  readonly baseURL: string
  readonly endpoint: string
  readonly credential: CredentialSource
  readonly model: string | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly idleTimeoutMs: number
  readonly fetch: FetchFunction
  readonly models: Readonly<Record<string, ModelInfo>>
  readonly reasoningStyle: ReasoningStyle
  readonly sendReasoning: boolean
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens'
  readonly responseFormatStyle: ResponseFormatStyle
  readonly strictJsonSchema: boolean
  readonly sessionIdHeader: string | false
  readonly clock: Clock
  /** Whether `clock` was given (it then wins over the harness clock of a call). */
  readonly ownClock: boolean
}

/**
 * Where the API key comes from.
 *
 * @internal
 */
export type CredentialSource =
  | { readonly kind: 'none' }
  | { readonly kind: 'value'; readonly apiKey: ApiKeySource }
  | { readonly kind: 'env'; readonly name: string }

const headerNamePattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const headerValuePattern = /^[\t\x20-\x7e]*$/
const providerPattern = /^[a-z0-9][a-z0-9._-]{0,63}$/
const positiveInteger = z
  .int({ error: 'must be a positive safe integer' })
  .min(1, { error: 'must be a positive safe integer' })
const nonEmpty = z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' })
const isFunction = (value: unknown): boolean => typeof value === 'function'
const isClock = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  isFunction((value as Clock).now) &&
  isFunction((value as Clock).setTimer)
const headerName = z.string().regex(headerNamePattern, { error: 'must be an HTTP header name' })

const modelInfoSchema = z.strictObject(
  {
    contextWindow: positiveInteger.optional(),
    defaultMaxTokens: positiveInteger.optional(),
    reasoningEfforts: z.array(nonEmpty, { error: 'must be an array of non-empty strings' }).optional(),
    defaultReasoningEffort: nonEmpty.optional(),
    inputModalities: z.array(z.enum(['text', 'image'], { error: "must be 'text' or 'image'" })).optional(),
  },
  { error: 'must be a ModelInfo object' },
)

const optionsSchema = z
  .strictObject(
    {
      baseURL: z
        .string({ error: 'must be an http(s) URL' })
        .refine(isHttpUrl, { error: 'must be an http(s) URL without credentials' }),
      apiKey: z
        .union([z.string(), z.custom<() => string>(isFunction)], {
          error: 'must be a string or a function returning one',
        })
        .optional(),
      apiKeyEnv: nonEmpty.optional(),
      model: nonEmpty.optional(),
      provider: z
        .string({ error: 'must be a provider id' })
        .regex(providerPattern, { error: 'must be a provider id (^[a-z0-9][a-z0-9._-]{0,63}$)' })
        .optional(),
      headers: z
        .record(
          headerName,
          z.string({ error: 'must be a string' }).regex(headerValuePattern, { error: 'must be a header-safe string' }),
          {
            error: 'must be an object of string header values',
          },
        )
        .optional(),
      idleTimeoutMs: positiveInteger.optional(),
      fetch: z.custom<FetchFunction>(isFunction, { error: 'must be a function' }).optional(),
      models: z.record(z.string(), modelInfoSchema, { error: 'must be an object of ModelInfo by model id' }).optional(),
      reasoningStyle: z
        .enum(['openai', 'deepseek', 'none'], { error: "must be 'openai', 'deepseek' or 'none'" })
        .optional(),
      sendReasoning: z.boolean({ error: 'must be a boolean' }).optional(),
      maxTokensField: z
        .enum(['max_tokens', 'max_completion_tokens'], { error: "must be 'max_tokens' or 'max_completion_tokens'" })
        .optional(),
      responseFormatStyle: z
        .enum(['json_schema', 'json_object', 'instruction'], {
          error: "must be 'json_schema', 'json_object' or 'instruction'",
        })
        .optional(),
      strictJsonSchema: z.boolean({ error: 'must be a boolean' }).optional(),
      sessionIdHeader: z
        .union([z.literal(false), headerName], { error: 'must be an HTTP header name or false' })
        .optional(),
      clock: z.custom<Clock>(isClock, { error: 'must be a Clock { now(), setTimer() }' }).optional(),
    },
    { error: 'must be an options object' },
  )
  .superRefine((options, context) => {
    if (options.apiKey !== undefined && options.apiKeyEnv !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['apiKey'],
        message: 'apiKey and apiKeyEnv are mutually exclusive; give one',
      })
    }
    for (const name of Object.keys(options.headers ?? {})) {
      if (name.toLowerCase() === 'authorization') {
        context.addIssue({
          code: 'custom',
          path: ['headers', name],
          message: 'must not be set here; use apiKey or apiKeyEnv',
        })
      }
    }
  })

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === ''
  } catch {
    return false
  }
}

/**
 * The API root (one trailing `/` of its path trimmed) and the chat-completions URL: the path is
 * joined before the query, which is kept (Azure's `?api-version=…`); a fragment is never sent.
 */
function endpointOf(url: string): { readonly baseURL: string; readonly endpoint: string } {
  const withoutFragment = url.split('#', 1)[0] ?? url
  const queryAt = withoutFragment.indexOf('?')
  const query = queryAt === -1 ? '' : withoutFragment.slice(queryAt)
  const path = queryAt === -1 ? withoutFragment : withoutFragment.slice(0, queryAt)
  const root = path.endsWith('/') ? path.slice(0, -1) : path
  return { baseURL: `${root}${query}`, endpoint: `${root}/chat/completions${query}` }
}

function toIssues(error: z.ZodError, options: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  for (const issue of error.issues) {
    const path = issue.path.map((part) => (typeof part === 'number' ? part : String(part)))
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ path: [...path, key], message: 'unknown option' })
    } else {
      issues.push({ path, message: issue.message })
    }
  }
  const keys = typeof options === 'object' && options !== null ? Object.keys(options) : []
  const rank = (issue: ValidationIssue): number => {
    const index = keys.indexOf(String(issue.path[0]))
    return index === -1 ? keys.length : index
  }
  return issues.sort((left, right) => rank(left) - rank(right))
}

function freezeInfo(info: z.output<typeof modelInfoSchema>): ModelInfo {
  const copy: { -readonly [K in keyof ModelInfo]: ModelInfo[K] } = {}
  if (info.contextWindow !== undefined) copy.contextWindow = info.contextWindow
  if (info.defaultMaxTokens !== undefined) copy.defaultMaxTokens = info.defaultMaxTokens
  if (info.reasoningEfforts !== undefined) copy.reasoningEfforts = Object.freeze([...info.reasoningEfforts])
  if (info.defaultReasoningEffort !== undefined) copy.defaultReasoningEffort = info.defaultReasoningEffort
  if (info.inputModalities !== undefined) copy.inputModalities = Object.freeze([...info.inputModalities])
  return Object.freeze(copy)
}

/**
 * Checks the options of `openaiCompatible` and fills the defaults.
 *
 * @internal
 * @throws {@link InvalidOptionsError} naming the first bad option (`field`); `apiKey` with
 *   `apiKeyEnv` is reported at `apiKey`, an `authorization` header at `headers.<name>`
 */
export function resolveOpenAIOptions(options: OpenAICompatibleOptions): ResolvedOpenAIOptions {
  const result = optionsSchema.safeParse(options)
  if (!result.success) {
    const issues = toIssues(result.error, options)
    const first = issues[0]
    throw new InvalidOptionsError({ issues, value: first === undefined ? options : valueAt(options, first.path) })
  }
  const parsed = result.data
  const { baseURL, endpoint } = endpointOf(parsed.baseURL)
  const models: Record<string, ModelInfo> = {}
  for (const [model, info] of Object.entries(parsed.models ?? {})) models[model] = freezeInfo(info)
  const credential: CredentialSource =
    options.apiKey !== undefined
      ? { kind: 'value', apiKey: options.apiKey }
      : parsed.apiKeyEnv !== undefined
        ? { kind: 'env', name: parsed.apiKeyEnv }
        : { kind: 'none' }
  return Object.freeze({
    provider: parsed.provider ?? 'openai-compatible',
    baseURL,
    endpoint,
    credential,
    model: parsed.model,
    headers: Object.freeze({ ...(parsed.headers ?? {}) }),
    idleTimeoutMs: parsed.idleTimeoutMs ?? 300_000,
    fetch: options.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init)),
    models: Object.freeze(models),
    reasoningStyle: parsed.reasoningStyle ?? 'openai',
    sendReasoning: parsed.sendReasoning ?? false,
    maxTokensField: parsed.maxTokensField ?? 'max_tokens',
    responseFormatStyle: parsed.responseFormatStyle ?? 'json_schema',
    strictJsonSchema: parsed.strictJsonSchema ?? false,
    sessionIdHeader: parsed.sessionIdHeader ?? 'x-session-id',
    clock: options.clock ?? systemClock(),
    ownClock: options.clock !== undefined,
  })
}
