import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { SystemPrompt } from './system-prompt.js'

/** The key of the system prompt, provided by the `system-prompt` entry. */
export const SystemPromptKey: ServiceKey<SystemPrompt> = defineService<SystemPrompt>(
  'system-prompt',
  'the system prompt',
)

declare module 'yoke' {
  interface Context {
    /**
     * `ctx.get(SystemPromptKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly systemPrompt: SystemPrompt
  }
}

defineContextAccessor('systemPrompt', SystemPromptKey)
