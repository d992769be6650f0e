import type { ScopeKey } from '../kernel/scope-graph.js'
import type { ToolSchema } from '../session/request-header.js'

/**
 * What every provider (section and context text, variable values, tool schemas) and every
 * `system-prompt/assemble` listener receives: the agent and scope being assembled for, and the
 * signal to honour. Frozen.
 */
export interface AssembleInput {
  /** The agent assembled for (the agent loop's `Agent` handle, also its scope key); absent outside an agent. */
  readonly agent?: ScopeKey
  /** The scope assembled for: its chain's layers are merged over the global one; absent → the global layer only. */
  readonly scope?: ScopeKey
  /** Aborted when the assembly is no longer wanted; providers should honour it. */
  readonly signal: AbortSignal
}

/** One system-prompt section of a {@link PromptAssembly}, its text evaluated. */
export interface AssembledSection {
  /** The section name. */
  readonly name: string
  /** The sort key (ascending). */
  readonly order: number
  /** The evaluated text (a template: `{{variable}}` references are rendered later). */
  readonly text: string
  /** Present (and `true`) only for a complete section: the whole prompt. */
  readonly complete?: true
}

/** One runtime-context entry of a {@link PromptAssembly}, its text evaluated. */
export interface AssembledContext {
  /** The context name. */
  readonly name: string
  /** The sort key (ascending). */
  readonly order: number
  /** The evaluated text (a template, rendered into the runtime-context snapshot). */
  readonly text: string
}

/**
 * What `assemble()` resolves with: the sorted, evaluated sections and
 * contexts, the variable values (a null-prototype record) and the ordered tool schemas. Deep-frozen;
 * every `assemble` builds fresh objects.
 */
export interface PromptAssembly {
  /** The sections, sorted by `order` (ties keep merge order); exactly the complete section when there is one. */
  readonly sections: readonly AssembledSection[]
  /** The runtime contexts, sorted by `order`; `[]` when a suppressor applies. */
  readonly contexts: readonly AssembledContext[]
  /** The variable values by name (null-prototype); `undefined` is a value that renders as an error. */
  readonly variables: Readonly<Record<string, string | undefined>>
  /** The tool schemas of the request, ordered by name or by the `toolOrder` option. */
  readonly tools: readonly ToolSchema[]
}
