import type { Disposer } from '../kernel/effect.js'
import type { AssembleInput, PromptAssembly } from './prompt-assembly.js'
import type { ContextDefinition, SectionDefinition, ToolSchemaProvider, VariableValue } from './prompt-contribution.js'

/** Options of `createSystemPrompt` (the `system-prompt` entry's config). */
export interface SystemPromptOptions {
  /**
   * The tool order of every assembly: listed names take their listed
   * positions, every other tool is inserted at the one `'*'`, in code-unit order. Checked by the
   * `system-prompt` entry's config schema.
   *
   * @default by name, in code-unit order
   */
  readonly toolOrder?: readonly string[]
}

/**
 * The system prompt (`services.systemPrompt`, the `system-prompt` entry):
 * sections, runtime contexts, variables, tool-schema providers and runtime-context suppressors in
 * a global layer plus one layer per scope, assembled per request. `ctx.get(services.systemPrompt)`
 * returns it bound to `ctx`: each registration is then an effect of `ctx` (undone, in reverse
 * order, when `ctx` disposes) and lands in `ctx.scope`'s layer (the global one without a scope),
 * so a scoped section shadows a global one of the same name for that scope and its descendants.
 *
 * @example
 * ```ts
 * const prompt = agentCtx.get(services.systemPrompt)
 * prompt.section({ name: 'rules', order: 10, text: 'Work in {{dir}}.' })
 * prompt.variable('dir', '/w')
 * const assembly = await prompt.assemble({ scope: agentKey, signal })
 * renderPrompt(assembly.sections, assembly.variables) // 'Work in /w.'
 * ```
 */
export interface SystemPrompt {
  /**
   * Registers a system-prompt section in the owner's layer; emits `system-prompt/change`.
   *
   * @param definition - `{ name, order, text, complete? }`
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field`) or `DUPLICATE_PROMPT_CONTRIBUTION`; {@link ContextDisposedError}
   */
  section(definition: SectionDefinition): Disposer
  /**
   * Registers a runtime-context entry in the owner's layer; emits `system-prompt/change`.
   *
   * @param definition - `{ name, order, text }` (no `complete`)
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field`) or `DUPLICATE_PROMPT_CONTRIBUTION`; {@link ContextDisposedError}
   */
  context(definition: ContextDefinition): Disposer
  /**
   * Registers the value of `{{name}}` in the owner's layer; emits `system-prompt/change`.
   *
   * @param name - matches `^[a-z][a-z0-9_]*$`
   * @param value - a string or a provider
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field: 'name'` / `'value'`) or `DUPLICATE_PROMPT_CONTRIBUTION`; {@link ContextDisposedError}
   */
  variable(name: string, value: VariableValue): Disposer
  /**
   * Registers a tool-schema provider in the owner's layer (anonymous: every provider of the chain
   * contributes); emits `system-prompt/change`.
   *
   * @param provider - called on every `assemble`
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field: 'provider'`); {@link ContextDisposedError}
   */
  tools(provider: ToolSchemaProvider): Disposer
  /**
   * Suppresses the runtime context for the owner's layer and every scope below it: their
   * assemblies have `contexts: []` (providers not called); emits `system-prompt/change`.
   *
   * @returns the disposer that lifts it
   * @throws {@link ContextDisposedError}
   */
  suppressRuntimeContext(): Disposer
  /**
   * Assembles the prompt for a scope. Whatever context it goes through,
   * it reads the layers of `input.scope` (the global layer alone without one).
   *
   * @param input - `{ agent?, scope?, signal }`; the signal is passed to every provider and listener
   * @returns a fresh, deep-frozen assembly
   * @throws {@link PromptAssemblyError} (rejects) `INVALID_VARIABLE_VALUE`, `DUPLICATE_TOOL_SCHEMA`, `MULTIPLE_COMPLETE_SECTIONS`, `UNKNOWN_TOOL_ORDER_ENTRY`, `INVALID_ASSEMBLY` or `CONTRIBUTION_FAILED`
   */
  assemble(input: AssembleInput): Promise<PromptAssembly>
}
