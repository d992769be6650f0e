import { ErrorCode } from '../errors/codes.js'
import { PromptRegistrationError, type PromptContributionKind } from '../errors/prompt-registration-error.js'
import { bindOwner } from '../kernel/bind-owner.js'
import type { Context } from '../kernel/context.js'
import type { Disposer } from '../kernel/effect.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import { createScopedLayers, type ScopedLayers } from '../kernel/scoped-layers.js'
import { assemblePrompt } from './assemble-prompt.js'
import type { AssembleInput, PromptAssembly } from './prompt-assembly.js'
import {
  type ContextDefinition,
  checkTextDefinition,
  checkToolProvider,
  checkVariable,
  type SectionDefinition,
  type TextEntry,
  type ToolSchemaProvider,
  type VariableValue,
} from './prompt-contribution.js'
import type { SystemPromptChangePayload } from './prompt-events.js'
import { createPromptLayer, isPromptLayerEmpty, type PromptLayer } from './prompt-layer.js'
import type { SystemPrompt, SystemPromptOptions } from './system-prompt.js'

/**
 * Builds the system prompt of one harness (the `system-prompt` entry provides it as `services.systemPrompt`).
 *
 * @param ctx - the `system-prompt` entry's context: it dispatches the events and owns unbound registrations
 * @param options - the tool order of every assembly
 * @returns the system prompt
 */
export function createSystemPrompt(ctx: Context, options: SystemPromptOptions = {}): SystemPrompt {
  return new HarnessSystemPrompt(ctx, options)
}

/** The {@link SystemPrompt} {@link createSystemPrompt} builds. */
export class HarnessSystemPrompt implements SystemPrompt {
  readonly #ctx: Context
  readonly #layers: ScopedLayers<PromptLayer>
  readonly #toolOrder: readonly string[] | undefined

  /** Use the `system-prompt` entry; `ctx` dispatches the events and owns unbound registrations. */
  constructor(ctx: Context, options: SystemPromptOptions = {}) {
    this.#ctx = ctx
    this.#layers = createScopedLayers({
      scopes: ctx.scopes,
      create: createPromptLayer,
      isEmpty: isPromptLayerEmpty,
      label: 'system-prompt',
    })
    this.#toolOrder = options.toolOrder === undefined ? undefined : Object.freeze([...options.toolOrder])
  }

  /**
   * Registers a system-prompt section in the owner's layer; emits `system-prompt/change`.
   *
   * @param definition - `{ name, order, text, complete? }`
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field`) or `DUPLICATE_PROMPT_CONTRIBUTION`; {@link ContextDisposedError}
   */
  section(definition: SectionDefinition): Disposer {
    return this.#text(this.#ctx, 'section', definition)
  }

  /**
   * Registers a runtime-context entry in the owner's layer; emits `system-prompt/change`.
   *
   * @param definition - `{ name, order, text }` (no `complete`)
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field`) or `DUPLICATE_PROMPT_CONTRIBUTION`; {@link ContextDisposedError}
   */
  context(definition: ContextDefinition): Disposer {
    return this.#text(this.#ctx, 'context', definition)
  }

  /**
   * Registers the value of `{{name}}` in the owner's layer; emits `system-prompt/change`.
   *
   * @param name - matches `^[a-z][a-z0-9_]*$`
   * @param value - a string or a provider
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field: 'name'` / `'value'`) or `DUPLICATE_PROMPT_CONTRIBUTION`; {@link ContextDisposedError}
   */
  variable(name: string, value: VariableValue): Disposer {
    return this.#variable(this.#ctx, name, value)
  }

  /**
   * Registers a tool-schema provider in the owner's layer (anonymous: every provider of the chain
   * contributes); emits `system-prompt/change`.
   *
   * @param provider - called on every `assemble`
   * @returns the disposer that removes it
   * @throws {@link PromptRegistrationError} `INVALID_PROMPT_CONTRIBUTION` (`field: 'provider'`); {@link ContextDisposedError}
   */
  tools(provider: ToolSchemaProvider): Disposer {
    return this.#tools(this.#ctx, provider)
  }

  /**
   * Suppresses the runtime context for the owner's layer and every scope below it: their
   * assemblies have `contexts: []` (providers not called); emits `system-prompt/change`.
   *
   * @returns the disposer that lifts it
   * @throws {@link ContextDisposedError}
   */
  suppressRuntimeContext(): Disposer {
    return this.#suppress(this.#ctx)
  }

  /**
   * Assembles the prompt for a scope. Whatever context it goes through,
   * it reads the layers of `input.scope` (the global layer alone without one).
   *
   * @param input - `{ agent?, scope?, signal }`; the signal is passed to every provider and listener
   * @returns a fresh, deep-frozen assembly
   * @throws {@link PromptAssemblyError} (rejects) `INVALID_VARIABLE_VALUE`, `DUPLICATE_TOOL_SCHEMA`, `MULTIPLE_COMPLETE_SECTIONS`, `UNKNOWN_TOOL_ORDER_ENTRY`, `INVALID_ASSEMBLY` or `CONTRIBUTION_FAILED`
   */
  assemble(input: AssembleInput): Promise<PromptAssembly> {
    return assemblePrompt({ ctx: this.#ctx, layers: this.#layers, toolOrder: this.#toolOrder }, input)
  }

  /** Owner-bound facade: registrations land in `owner.scope`'s layer, as effects of `owner`. */
  [bindOwner](owner: Context): HarnessSystemPrompt {
    const facade = Object.create(this) as HarnessSystemPrompt
    Object.defineProperties(facade, {
      section: { value: (definition: SectionDefinition) => this.#text(owner, 'section', definition) },
      context: { value: (definition: ContextDefinition) => this.#text(owner, 'context', definition) },
      variable: { value: (name: string, value: VariableValue) => this.#variable(owner, name, value) },
      tools: { value: (provider: ToolSchemaProvider) => this.#tools(owner, provider) },
      suppressRuntimeContext: { value: () => this.#suppress(owner) },
      assemble: { value: (input: AssembleInput) => this.assemble(input) },
    })
    Object.freeze(facade)
    return facade
  }

  #text(owner: Context, kind: 'section' | 'context', definition: unknown): Disposer {
    const entry = checkTextDefinition(kind, definition)
    return this.#named(
      owner,
      kind,
      entry.name,
      (layer) => (kind === 'section' ? layer.sections : layer.contexts) as Map<string, unknown>,
      entry,
    )
  }

  #variable(owner: Context, name: unknown, value: unknown): Disposer {
    checkVariable(name, value)
    return this.#named(owner, 'variable', name as string, (layer) => layer.variables as Map<string, unknown>, value)
  }

  /** One name per kind per layer: the duplicate check runs inside the registration, so a disposed owner fails first. */
  #named(
    owner: Context,
    kind: PromptContributionKind,
    name: string,
    namespace: (layer: PromptLayer) => Map<string, unknown>,
    value: TextEntry | VariableValue,
  ): Disposer {
    const scope = owner.scope
    return this.#layers.register(
      owner,
      (layer) => {
        const entries = namespace(layer)
        if (entries.has(name)) {
          throw new PromptRegistrationError({
            code: ErrorCode.DUPLICATE_PROMPT_CONTRIBUTION,
            kind,
            name,
            ...(scope === undefined ? {} : { scope }),
          })
        }
        entries.set(name, value)
        return () => {
          if (entries.get(name) === value) entries.delete(name)
          this.#changed('remove', kind, name, scope)
        }
      },
      () => this.#changed('add', kind, name, scope),
    )
  }

  #tools(owner: Context, provider: unknown): Disposer {
    checkToolProvider(provider)
    const entry = Object.freeze({ provider })
    return this.#anonymous(owner, 'tools', (layer) => layer.tools, entry)
  }

  #suppress(owner: Context): Disposer {
    return this.#anonymous(owner, 'suppressor', (layer) => layer.suppressors, Object.freeze({}))
  }

  #anonymous<T extends object>(
    owner: Context,
    kind: PromptContributionKind,
    set: (layer: PromptLayer) => Set<T>,
    entry: T,
  ): Disposer {
    const scope = owner.scope
    return this.#layers.register(
      owner,
      (layer) => {
        const entries = set(layer)
        entries.add(entry)
        return () => {
          entries.delete(entry)
          this.#changed('remove', kind, undefined, scope)
        }
      },
      () => this.#changed('add', kind, undefined, scope),
    )
  }

  #changed(
    change: 'add' | 'remove',
    kind: PromptContributionKind,
    name: string | undefined,
    scope: ScopeKey | undefined,
  ): void {
    const payload: SystemPromptChangePayload = Object.freeze({
      change,
      kind,
      ...(name === undefined ? {} : { name }),
      ...(scope === undefined ? {} : { scope }),
    })
    this.#ctx.emit('system-prompt/change', payload, scope === undefined ? undefined : { scope })
  }
}
