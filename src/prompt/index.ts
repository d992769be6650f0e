/**
 * What the model is told besides the message history: strict
 * `{{variable}}` rendering, the system prompt and the runtime-context projection.
 *
 * @module
 */
export {
  type PromptTemplateSection,
  type PromptVariables,
  type RenderPromptOptions,
  renderPrompt,
} from './render-prompt.js'
export {
  createRuntimeContextProjection,
  isRuntimeContextSnapshot,
  RUNTIME_CONTEXT_CLEARED,
  RUNTIME_CONTEXT_HEADER,
  RUNTIME_CONTEXT_PLUGIN,
  type RuntimeContextProjection,
  type RuntimeContextProjectionOptions,
} from './runtime-context-projection.js'
export type { AssembledContext, AssembledSection, AssembleInput, PromptAssembly } from './prompt-assembly.js'
export type {
  ContextDefinition,
  PromptSectionInput,
  PromptText,
  SectionDefinition,
  ToolSchemaContribution,
  ToolSchemaProvider,
  VariableValue,
} from './prompt-contribution.js'
export {
  type SystemPromptAssemblePayload,
  type SystemPromptChangePayload,
  type SystemPromptEvents,
  systemPromptEvents,
} from './prompt-events.js'
export { type Instructions, instructionSections } from './instructions.js'
export type { SystemPrompt, SystemPromptOptions } from './system-prompt.js'
export { createSystemPrompt, HarnessSystemPrompt } from './harness-system-prompt.js'
export { type SystemPromptEntryConfig, systemPromptPlugin } from './system-prompt-plugin.js'
