import { z } from 'zod'
import type { ValidationIssue } from '../errors/issue.js'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import { ModelsKey } from './models-key.js'
import type { ModelAdapter, ModelRoute } from './model-adapter.js'
import { modelEvents } from './model-events.js'
import { createModelRouter, type ModelRouteDefaults } from './model-router.js'
import { retryPolicySchema } from './retry/retry-policy.js'
import { checkCallField, isProviderId } from './validate-model-request.js'

/** A model adapter, as a route resolves it, with its provider and the call-config defaults of the route. */
export interface ResolvedModelRoute {
  /** The adapter to register. */
  readonly adapter: ModelAdapter
  /** The provider to register it under: `route.provider ?? adapter.provider`. */
  readonly provider: string
  /** The call-config defaults: `provider`, `model ?? adapter.defaultModel`, and the route's other fields. */
  readonly defaults: ModelRouteDefaults
}

/** The config of the `model` entry. */
export interface ModelEntryConfig {
  /**
   * The harness `model` option: registered globally when the entry starts; a route's call-config
   * fields become the agents' call-config defaults (`harness.agents.harnessDefaults()`).
   *
   * @default none (no global route)
   */
  readonly model?: ModelAdapter | ModelRoute
}

const routeKeys: ReadonlySet<string> = new Set([
  'adapter',
  'retry',
  'provider',
  'model',
  'reasoningEffort',
  'temperature',
  'maxTokens',
  'stop',
])
/** The index a call-field violation names (`stop[1]` → `[1]`), as a path tail. */
function indexTail(field: string): number[] {
  const match = /\[(\d+)\]$/.exec(field)
  return match === null ? [] : [Number(match[1])]
}

const shapeMessage = 'must be a ModelAdapter (an object with stream()) or a ModelRoute { adapter, ...call config }'

/**
 * Whether `value` has the shape of a {@link ModelAdapter}: an object with a `stream` function (and
 * `describeModel`, if present, a function).
 *
 * @param value - anything
 * @returns `true` for an adapter
 */
export function isModelAdapter(value: unknown): value is ModelAdapter {
  if (typeof value !== 'object' || value === null) return false
  const record = value as { stream?: unknown; describeModel?: unknown }
  return (
    typeof record.stream === 'function' &&
    (record.describeModel === undefined || typeof record.describeModel === 'function')
  )
}

function adapterIssues(adapter: ModelAdapter, path: readonly string[], provided: boolean): ValidationIssue[] {
  if (provided || isProviderId(adapter.provider)) return []
  return [{ path: [...path, 'provider'], message: 'must be a provider id (^[a-z0-9][a-z0-9._-]{0,63}$)' }]
}

/**
 * Where a `model` option is checked.
 *
 * @internal
 */
export interface ModelOptionContext {
  /** Whether the route may carry `retry` (the harness `model` option may, an agent's may not). */
  readonly retry?: boolean
}

function retryIssues(retry: unknown, allowed: boolean): ValidationIssue[] {
  if (!allowed) {
    return [
      {
        path: ['retry'],
        message: 'is set on the harness model option only (createHarness({ model: { adapter, retry } }))',
      },
    ]
  }
  const result = retryPolicySchema.safeParse(retry)
  if (result.success) return []
  const issues: ValidationIssue[] = []
  for (const issue of result.error.issues) {
    const path = ['retry', ...issue.path.map((part) => (typeof part === 'number' ? part : String(part)))]
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ path: [...path, key], message: 'is not a retry policy field' })
    } else issues.push({ path, message: issue.message })
  }
  return issues
}

/**
 * The problems of a `model` option: an adapter with a provider-id `provider`, or a route
 * `{ adapter, provider?, model?, reasoningEffort?, temperature?, maxTokens?, stop?, retry? }` whose
 * fields follow the model request rules (`retry` a retry policy, and only where `options.retry`
 * allows it).
 *
 * @param value - the candidate
 * @param options - where the option is checked
 * @returns the issues, paths relative to the option; empty when valid
 * @internal
 */
export function modelOptionIssues(value: unknown, options: ModelOptionContext = {}): ValidationIssue[] {
  if (typeof value !== 'object' || value === null) return [{ path: [], message: shapeMessage }]
  if (!('adapter' in value))
    return isModelAdapter(value) ? adapterIssues(value, [], false) : [{ path: [], message: shapeMessage }]
  const route = value as Record<string, unknown>
  const issues: ValidationIssue[] = []
  for (const key of Object.keys(route))
    if (!routeKeys.has(key)) issues.push({ path: [key], message: 'is not a ModelRoute field' })
  const adapter = route['adapter']
  if (!isModelAdapter(adapter))
    issues.push({ path: ['adapter'], message: 'must be a ModelAdapter (an object with stream())' })
  else issues.push(...adapterIssues(adapter, ['adapter'], route['provider'] !== undefined))
  if (route['provider'] !== undefined && !isProviderId(route['provider'])) {
    issues.push({ path: ['provider'], message: 'must be a provider id (^[a-z0-9][a-z0-9._-]{0,63}$)' })
  }
  if (route['retry'] !== undefined) issues.push(...retryIssues(route['retry'], options.retry === true))
  for (const key of ['model', 'reasoningEffort', 'temperature', 'maxTokens', 'stop']) {
    if (route[key] === undefined) continue
    const problem = checkCallField(key, route[key])
    if (problem !== undefined) issues.push({ path: [key, ...indexTail(problem.field)], message: problem.message })
  }
  return issues
}

/**
 * The zod schema of the harness `model` option (a route may carry `retry`), used by the options
 * schema and the `model` entry's config. Passes the value through by reference.
 *
 * @internal
 */
export const modelOptionSchema: z.ZodType<ModelAdapter | ModelRoute> = z.unknown().superRefine((value, context) => {
  for (const issue of modelOptionIssues(value, { retry: true }))
    context.addIssue({ code: 'custom', path: [...issue.path], message: issue.message })
}) as unknown as z.ZodType<ModelAdapter | ModelRoute>

/**
 * Resolves a harness or agent `model` value: a route registers
 * `route.adapter` under `route.provider ?? adapter.provider`, and its other fields, with `model ??
 * adapter.defaultModel`, become call-config defaults.
 *
 * @param input - an adapter or a route (already validated)
 * @returns the adapter, its provider and the frozen defaults
 * @example
 * ```ts
 * resolveModelRoute({ adapter: deepseekAdapter, maxTokens: 2048 }).defaults
 * // → { provider: 'deepseek', model: 'deepseek-v4-flash', maxTokens: 2048 }
 * ```
 */
export function resolveModelRoute(input: ModelAdapter | ModelRoute): ResolvedModelRoute {
  const route: ModelRoute = 'adapter' in input ? input : { adapter: input }
  const { adapter, provider: routeProvider, model: routeModel, retry: _retry, ...rest } = route
  const provider = routeProvider ?? adapter.provider
  const model = routeModel ?? adapter.defaultModel
  const defaults: { -readonly [K in keyof ModelRouteDefaults]: ModelRouteDefaults[K] } = { provider }
  if (model !== undefined) defaults.model = model
  if (rest.reasoningEffort !== undefined) defaults.reasoningEffort = rest.reasoningEffort
  if (rest.temperature !== undefined) defaults.temperature = rest.temperature
  if (rest.maxTokens !== undefined) defaults.maxTokens = rest.maxTokens
  if (rest.stop !== undefined) defaults.stop = Object.freeze([...rest.stop])
  return Object.freeze({ adapter, provider, defaults: Object.freeze(defaults) })
}

const configSchema = z.strictObject({ model: modelOptionSchema.optional() })

/**
 * The `model` entry of the default bundle: provides the default model registry as `services.models`,
 * registers the `llm/*` events, and routes the harness `model` option in the global layer (an
 * effect of the entry, removed when it stops). A route's call-config fields are exposed to the
 * agent loop as the router's `defaults`.
 *
 * @returns a fresh plugin definition
 */
export function modelPlugin(): PluginDefinition<ModelEntryConfig | undefined> {
  return definePlugin({
    name: 'model',
    provides: [ModelsKey],
    events: [modelEvents],
    config: configSchema.optional() as z.ZodType<ModelEntryConfig | undefined>,
    apply(ctx, config) {
      const route = config?.model === undefined ? undefined : resolveModelRoute(config.model)
      ctx.provide(ModelsKey, createModelRouter(ctx, route === undefined ? {} : { defaults: route.defaults }))
      if (route !== undefined) ctx.get(ModelsKey).register(route.adapter, { providers: [route.provider] })
    },
  })
}
