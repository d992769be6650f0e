import { defineContextAccessor } from '../kernel/context-accessor.js'
import { defineService, type ServiceKey } from '../kernel/service-key.js'
import type { SystemPrompt } from './system-prompt.js'
import type { SystemPromptEvents } from './prompt-events.js'

/** The key of the system prompt, provided by the `system-prompt` entry. */
export const SystemPromptKey: ServiceKey<SystemPrompt> = defineService<SystemPrompt>(
  'system-prompt',
  'the system prompt',
)

// What the system-prompt feature adds to the package, merged by the package's name so the bundled
// declarations keep it: its events, typed for every `ctx.on` and dispatch, and its context accessor.
declare module 'yoke' {
  interface YokeEvents extends SystemPromptEvents {}
  interface Context {
    /**
     * `ctx.get(SystemPromptKey)`. Throws `ServiceMissingError` when absent.
     */
    readonly systemPrompt: SystemPrompt
  }
}

defineContextAccessor('systemPrompt', SystemPromptKey)
