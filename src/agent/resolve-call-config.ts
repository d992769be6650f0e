import { MissingModelError } from '../errors/agent-errors.js'
import type { CallConfig, RequestHeader } from '../session/request-header.js'

/**
 * A call config that may still lack `provider` and `model`: the seed handed to the
 * `agent/request` waterfall. A request whose config still lacks either after the waterfall fails
 * with `MissingModelError`.
 */
export type CallConfigSeed = Partial<CallConfig>

/** The call fields of the agent options; an `undefined` field counts as not set. */
export type CallConfigOptions = { readonly [K in keyof CallConfig]?: CallConfig[K] | undefined }

/** Input of {@link resolveCallConfig}. */
export interface ResolveCallConfigInput {
  /** The folded header of the log (`session.requestHeader()`), or `undefined` when none was logged. */
  readonly lastHeader: RequestHeader | undefined
  /** The driver's options; only their call fields are read. */
  readonly options: CallConfigOptions
  /**
   * Whether this is the driver's first request, i.e. the driver has not logged a `request/header`
   * yet. A later request over a log without a header is treated as a first one.
   */
  readonly firstRequestOfDriver: boolean
}

/** The call fields, in `CallConfig` order. */
const callFields = ['provider', 'model', 'reasoningEffort', 'temperature', 'maxTokens', 'stop'] as const

/**
 * The seed call config of a request. Every request starts from the last logged
 * header's config minus its adapter-default fields. On the driver's first request, every call field
 * set in the options overlays it; when that overlay changes `provider` or `model`, a logged
 * `reasoningEffort` is dropped unless the options set one. Later requests ignore the options, so a
 * switch returned by an `agent/request` listener (and logged) persists.
 *
 * @param input - the folded header, the options and whether this is the driver's first request
 * @returns a fresh, deep-frozen seed, fields in `CallConfig` order; it may lack `provider`/`model`
 * @example
 * ```ts
 * const seed = resolveCallConfig({ lastHeader: session.requestHeader(), options: agent.options, firstRequestOfDriver: true })
 * ```
 */
export function resolveCallConfig(input: ResolveCallConfigInput): Readonly<CallConfigSeed> {
  const { lastHeader, options } = input
  const seed: { -readonly [K in keyof CallConfig]?: CallConfig[K] } =
    lastHeader === undefined ? {} : { ...chosenConfig(lastHeader) }
  if (input.firstRequestOfDriver || lastHeader === undefined) {
    const switches =
      lastHeader !== undefined &&
      ((options.provider !== undefined && options.provider !== lastHeader.config.provider) ||
        (options.model !== undefined && options.model !== lastHeader.config.model))
    if (switches && options.reasoningEffort === undefined) delete seed.reasoningEffort
    for (const field of callFields) {
      const value = options[field]
      if (value !== undefined) (seed as Record<string, unknown>)[field] = value
    }
  }
  return frozenCallConfig(seed)
}

/**
 * A deep-frozen clone of a call config: own enumerable keys in `CallConfig` order first (then any
 * other key, kept for validation to report), `undefined` values dropped, arrays copied. Mutating
 * the result throws `TypeError` in strict mode; the argument is neither frozen nor referenced.
 *
 * @param config - a (possibly partial) call config, e.g. an `agent/request` result
 * @returns the frozen clone
 */
export function frozenCallConfig<T extends CallConfigOptions>(config: T): Readonly<T> {
  const record = config as Readonly<Record<string, unknown>>
  const keys = [
    ...callFields.filter((field) => Object.hasOwn(record, field)),
    ...Object.keys(record).filter((key) => !(callFields as readonly string[]).includes(key)),
  ]
  const clone: Record<string, unknown> = {}
  for (const key of keys) {
    const value = record[key]
    if (value === undefined) continue
    clone[key] = Array.isArray(value) ? Object.freeze([...(value as readonly unknown[])]) : value
  }
  return Object.freeze(clone) as Readonly<T>
}

/**
 * Checks that a call config names a provider and a model, after the
 * `agent/request` waterfall; the other fields are validated by `prepareCall`.
 *
 * @param config - the waterfall's result
 * @returns the same object, typed as a full {@link CallConfig}
 * @throws {@link MissingModelError} `MISSING_MODEL` with `missing` (`['provider']`, `['model']` or both)
 */
export function checkCallConfig(config: Readonly<CallConfigSeed>): CallConfig {
  const missing: ('provider' | 'model')[] = []
  if (config.provider === undefined) missing.push('provider')
  if (config.model === undefined) missing.push('model')
  if (missing.length > 0) throw new MissingModelError({ missing })
  return config as CallConfig
}

/** The header's config minus the fields its `adapterDefaults` marks. */
function chosenConfig(header: RequestHeader): CallConfigSeed {
  const { reasoningEffort, maxTokens, ...rest } = header.config
  return {
    ...rest,
    ...(reasoningEffort !== undefined && header.adapterDefaults?.reasoningEffort !== true ? { reasoningEffort } : {}),
    ...(maxTokens !== undefined && header.adapterDefaults?.maxTokens !== true ? { maxTokens } : {}),
  }
}
