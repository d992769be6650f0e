import type { TextEntry, ToolSchemaProvider, VariableValue } from './prompt-contribution.js'

/**
 * @internal The contributions of one layer (the global one or one scope's): three named
 * namespaces in registration order, the anonymous tool providers and the suppressors.
 */
export interface PromptLayer {
  readonly sections: Map<string, TextEntry>
  readonly contexts: Map<string, TextEntry>
  readonly variables: Map<string, VariableValue>
  /** Each registration is its own entry (a provider registered twice contributes twice). */
  readonly tools: Set<{ readonly provider: ToolSchemaProvider }>
  readonly suppressors: Set<object>
}

/** @internal A fresh, empty layer. */
export function createPromptLayer(): PromptLayer {
  return { sections: new Map(), contexts: new Map(), variables: new Map(), tools: new Set(), suppressors: new Set() }
}

/** @internal Whether a layer holds nothing (a scoped layer is then reclaimed). */
export function isPromptLayerEmpty(layer: PromptLayer): boolean {
  return (
    layer.sections.size === 0 &&
    layer.contexts.size === 0 &&
    layer.variables.size === 0 &&
    layer.tools.size === 0 &&
    layer.suppressors.size === 0
  )
}
