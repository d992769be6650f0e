import { z } from 'zod'
import { definePlugin, type PluginDefinition } from '../kernel/plugin.js'
import type { JsonValue } from '../session/json-value.js'
import type { TextBlock } from '../session/content-block.js'
import type { PluginMessageSource } from '../session/message.js'
import { sessionEvents } from '../session/session-events.js'
import { canonicalJson } from '../session/snapshot/canonical-json.js'
import type { ToolAgent, ToolCallInfo } from './tool-call-info.js'
import { thrownMessage } from './tool-error-result.js'
import { toolEvents } from './tool-events.js'

/** Options of {@link repeatToolReminder}. */
export interface RepeatToolReminderOptions {
  /**
   * The counts of identical calls in a row at which a reminder is injected: non-empty, integers ≥ 2,
   * strictly increasing. The first gets the short reminder, later ones the pointed one.
   *
   * @default [3, 5, 8]
   */
  readonly thresholds?: readonly number[]
  /**
   * Tool names that neither count nor break a chain (e.g. a `wait` or `poll` tool).
   *
   * @default []
   */
  readonly exclude?: readonly string[]
}

/** The parsed config of the `repeat-tool-reminder` entry: {@link RepeatToolReminderOptions} with defaults applied. */
export interface RepeatToolReminderConfig {
  /** The thresholds, validated. */
  readonly thresholds: readonly number[]
  /** The excluded tool names. */
  readonly exclude: readonly string[]
}

/** What the reminder asks of a call's agent: the `inject` of the agent handle. */
interface InjectingAgent {
  inject(input: { readonly content: readonly TextBlock[]; readonly source: PluginMessageSource }): unknown
}

const thresholdsMessage = 'must be a non-empty, strictly increasing list of integers ≥ 2'

function validThresholds(value: unknown): boolean {
  if (!Array.isArray(value) || value.length === 0) return false
  let previous = 1
  for (const item of value) {
    if (!Number.isSafeInteger(item) || (item as number) <= previous) return false
    previous = item as number
  }
  return true
}

const configSchema: z.ZodType<RepeatToolReminderConfig> = z.strictObject(
  {
    thresholds: z.custom<readonly number[]>(validThresholds, { error: thresholdsMessage }).default([3, 5, 8]),
    exclude: z
      .array(z.string({ error: 'must be a tool name' }), { error: 'must be an array of tool names' })
      .default([]),
  },
  { error: 'must be { thresholds?, exclude? }' },
)

/** The source of every reminder message. */
const reminderSource: PluginMessageSource = Object.freeze({ kind: 'plugin', plugin: 'repeat-tool-reminder' })

const ARGUMENTS_SHOWN = 500

/** The chain key of a call: its name plus the canonical JSON of its arguments (the raw text when they do not parse). Linear in the argument size. */
function chainKey(name: string, raw: string): string {
  let argumentText: string
  if (raw === '') argumentText = 'j{}'
  else {
    try {
      argumentText = `j${canonicalJson(JSON.parse(raw) as JsonValue)}`
    } catch {
      argumentText = `r${raw}`
    }
  }
  return `${JSON.stringify(name)}${argumentText}`
}

/** `raw` cut to its first 500 code points plus `… (+<k> more chars)`, or `raw` when it is no longer. */
function shownArguments(raw: string): string {
  let points = 0
  let cut = raw.length
  for (let index = 0; index < raw.length; points++) {
    if (points === ARGUMENTS_SHOWN) cut = index
    index += (raw.codePointAt(index) as number) > 0xffff ? 2 : 1
  }
  return points <= ARGUMENTS_SHOWN ? raw : `${raw.slice(0, cut)}… (+${points - ARGUMENTS_SHOWN} more chars)`
}

/** The reminder text for `count` identical calls. */
function reminderText(call: Pick<ToolCallInfo, 'name' | 'arguments'>, count: number, first: boolean): string {
  if (first)
    return `You have made the same tool call ${count} times in a row with identical arguments. If it is not helping, try a different approach.`
  return `"${call.name}" has now been called ${count} times in a row with the same arguments: ${shownArguments(call.arguments)}. Repeating it is unlikely to help; change the arguments, use another tool, or answer with what you have.`
}

function isUserSource(data: unknown): boolean {
  const source = (data as { readonly source?: { readonly kind?: unknown } } | null)?.source
  return typeof source === 'object' && source !== null && source.kind === 'user'
}

interface Chain {
  readonly key: string
  readonly count: number
}

/**
 * The advisory repeat-tool reminder, entry id `repeat-tool-reminder`; not in the
 * default bundle. It never blocks a call or changes a result: on `tools/post-execute` it calls
 * `next()` first and returns its result unchanged, then counts. Per agent, a call with the same
 * name and the same arguments (canonical JSON, object keys sorted; unparsable arguments compare as
 * raw text; `''` as `{}`) as the agent's previous call extends the chain, any other call starts a
 * new one at 1; `exclude`d names neither count nor reset; a logged `user/message` whose
 * `source.kind` is `'user'` resets the agent's chain. When the count equals a threshold it calls
 * `agent.inject({ content, source: { kind: 'plugin', plugin: 'repeat-tool-reminder' } })`: the
 * call's agent must have `inject` (the agent handle does); without it, or when `inject` throws, the
 * reminder is dropped with a logger warning. Later thresholds quote the call's raw arguments, cut
 * to 500 code points. State is in memory: after a resume the count starts at zero.
 *
 * @param options - thresholds and excluded tools, validated when the entry starts
 * @returns the plugin definition; a bad config fails its start with `PluginConfigError` (issue path `['thresholds']` for the thresholds)
 * @example
 * ```ts
 * const harness = await createHarness({ plugins: [repeatToolReminder({ thresholds: [3, 6], exclude: ['wait'] })] })
 * ```
 */
export function repeatToolReminder(
  options: RepeatToolReminderOptions = {},
): PluginDefinition<RepeatToolReminderConfig> {
  const given: unknown =
    typeof options === 'object' && options !== null && !Array.isArray(options)
      ? Object.fromEntries(
          Object.entries(options).map(([key, value]) => [key, Array.isArray(value) ? [...value] : value]),
        )
      : options
  return definePlugin({
    name: 'repeat-tool-reminder',
    events: [toolEvents, sessionEvents],
    config: configSchema.prefault(given as RepeatToolReminderConfig),
    apply(ctx, config) {
      const thresholds = [...config.thresholds]
      const excluded = new Set(config.exclude)
      const chains = new Map<string, Chain>()
      const remind = (agent: ToolAgent, text: string): void => {
        const inject = (agent as Partial<InjectingAgent>).inject
        if (typeof inject !== 'function') {
          ctx.logger.warn('repeat-tool-reminder: the agent has no inject(); the reminder was dropped', {
            agent: agent.id,
          })
          return
        }
        try {
          inject.call(agent, { content: [{ type: 'text', text }], source: reminderSource })
        } catch (error) {
          ctx.logger.warn('repeat-tool-reminder: agent.inject() threw; the reminder was dropped', {
            agent: agent.id,
            error: thrownMessage(error),
          })
        }
      }
      const observe = (call: ToolCallInfo): void => {
        if (excluded.has(call.name)) return
        const key = chainKey(call.name, call.arguments)
        const previous = chains.get(call.agent.id)
        const count = previous?.key === key ? previous.count + 1 : 1
        chains.set(call.agent.id, { key, count })
        const index = thresholds.indexOf(count)
        if (index !== -1) remind(call.agent, reminderText(call, count, index === 0))
      }
      ctx.on('tools/post-execute', async (payload, next) => {
        const result = await next()
        observe(payload.call)
        return result
      })
      ctx.on('session/event', ({ session, event }) => {
        if (event.type === 'user/message' && isUserSource(event.data)) chains.delete(session.id)
      })
      ctx.on('session/disposed', ({ session }) => {
        chains.delete(session.id)
      })
    },
  })
}
