import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/**
 * `openAgent` found the agent live (or being opened) with other overrides than the ones given:
 * returning it would silently drop them. `fields` names each override that differs, e.g.
 * `['options.maxTokens', 'tools']`. Dispose the agent first to reopen it with new overrides, or
 * call `openAgent` without them.
 */
export class AgentOverridesMismatchError extends HarnessError {
  static override readonly brand: string = 'AgentOverridesMismatchError'
  /** The agent (session) id. */
  readonly agentId: string
  /** The overrides that differ, as paths: `preset`, `model`, `tools`, `instructions`, `options.<field>` (frozen). */
  readonly fields: readonly string[]

  /** @param options - the agent id and the differing fields */
  constructor(options: { agentId: string; fields: readonly string[] }) {
    super(
      ErrorCode.AGENT_OVERRIDES_MISMATCH,
      `agent "${options.agentId}" is already live with other overrides (${options.fields.join(', ')}); dispose it first to open it with these, or open it without overrides`,
    )
    this.agentId = options.agentId
    this.fields = Object.freeze([...options.fields])
  }
}
