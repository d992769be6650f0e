import type { PromptContributionKind } from '../errors/prompt-registration-error.js'
import { defineEvents, type Emit, type EventCatalog, type Waterfall } from '../kernel/event-catalog.js'
import type { ScopeKey } from '../kernel/scope-graph.js'
import type { AssembleInput, PromptAssembly } from './prompt-assembly.js'

/** Payload of `system-prompt/change`: one contribution was registered or removed. */
export interface SystemPromptChangePayload {
  /** `'add'` after a successful registration, `'remove'` after an effective dispose. */
  readonly change: 'add' | 'remove'
  /** The contribution kind. */
  readonly kind: PromptContributionKind
  /** The contribution name (sections, contexts, variables); absent for tool providers and suppressors. */
  readonly name?: string
  /** The scope key of the layer concerned; absent for the global layer. */
  readonly scope?: ScopeKey
}

/** Payload of `system-prompt/assemble`: the assembly built so far, deep-frozen, and what it was built for. */
export interface SystemPromptAssemblePayload extends AssembleInput {
  /** The assembly (deep-frozen: return a replacement, or pass one with `next({ ...payload, assembly })`). */
  readonly assembly: PromptAssembly
}

/** The events of the `system-prompt` entry. */
export type SystemPromptEvents = {
  /**
   * A contribution was added or removed (emitted with the layer's `{ scope }`). Listener throws are
   * contained and never undo the registration.
   */
  readonly 'system-prompt/change': Emit<SystemPromptChangePayload>
  /**
   * Middleware over every assembly (dispatched with `{ scope }`, so global listeners and those of
   * the scope or an ancestor run). The innermost default returns `payload.assembly`; the result must
   * be a valid assembly, like `payload.assembly` (else `INVALID_ASSEMBLY`). A complete section and a suppressor
   * are restored after it.
   */
  readonly 'system-prompt/assemble': Waterfall<SystemPromptAssemblePayload, PromptAssembly>
}

/** The catalog of {@link SystemPromptEvents}, registered by the `system-prompt` entry. */
export const systemPromptEvents: EventCatalog<SystemPromptEvents> = defineEvents<SystemPromptEvents>({
  'system-prompt/change': 'emit',
  'system-prompt/assemble': 'waterfall',
})
