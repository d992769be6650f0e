import type { AgentRunOptionsData } from '../session/core-event-types.js'
import type { UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { AgentOptions } from './agent-options.js'
import { type OutputSpec, outputSpecFromFormat } from './structured-output.js'

/** The step limit of a turn when neither the run, the agent nor the harness sets one. */
export const defaultMaxSteps = 25

/** How many repair steps an invalid structured answer gets when the run does not say. */
export const defaultOutputRepairs = 1

/** What one turn runs under: its step limit and, for a structured run, its output contract. */
export interface TurnSettings {
  /** The step limit: a positive integer or `Infinity`. */
  readonly maxSteps: number
  /** The output contract of a structured run. */
  readonly output: OutputSpec | undefined
  /** How many repair steps an invalid answer gets. */
  readonly outputRepairs: number
}

/** The per-run settings `agent.run()` / `agent.stream()` attach to their prompt. */
export interface RunSettings {
  /** The run's step limit. */
  readonly maxSteps?: number | undefined
  /** The run's output contract. */
  readonly output?: OutputSpec | undefined
  /** The run's repair budget. */
  readonly outputRepairs?: number | undefined
}

/**
 * The per-run settings of an agent's queued prompts. The log is their truth: {@link
 * RunSettingsIndex.record} appends an `agent/run-options` event before the prompt is queued, and
 * the turn that claims the prompt reads it back, so a resumed session (where no caller waits any
 * more) makes the same requests. The only thing kept beside the log is a run's zod schema, which
 * checks answers more precisely than its JSON Schema can; a resumed turn checks with the JSON Schema.
 */
export class RunSettingsIndex {
  readonly #session: Session
  readonly #options: AgentOptions
  /** How far the log has been folded. */
  #cursor = 0
  readonly #logged = new Map<string, AgentRunOptionsData>()
  readonly #specs = new Map<string, OutputSpec>()

  /**
   * @param session - the agent's session
   * @param options - the agent's options (their `maxSteps` is the fallback)
   */
  constructor(session: Session, options: AgentOptions) {
    this.#session = session
    this.#options = options
  }

  /**
   * Logs a prompt's per-run settings (nothing when it has none) and keeps its output contract.
   *
   * @param messageId - the prompt's message id
   * @param settings - the run's settings
   * @throws the append's error (nothing kept)
   */
  record(messageId: string, settings: RunSettings): void {
    const { maxSteps, output, outputRepairs } = settings
    if (maxSteps === undefined && output === undefined && outputRepairs === undefined) return
    this.#session.append('agent/run-options', {
      messageId,
      // JSON has no Infinity: `null` is "no limit".
      ...(maxSteps === undefined ? {} : { maxSteps: Number.isFinite(maxSteps) ? maxSteps : null }),
      ...(output === undefined ? {} : { responseFormat: output.responseFormat }),
      ...(outputRepairs === undefined ? {} : { outputRepairs }),
    })
    if (output !== undefined) this.#specs.set(messageId, output)
  }

  /**
   * Forgets a prompt's in-memory output contract (its run settled before a claim).
   *
   * @param messageId - the prompt's message id
   */
  forget(messageId: string): void {
    this.#specs.delete(messageId)
  }

  /**
   * The settings of a turn: those logged for the first claimed prompt that has any, else the
   * agent's.
   *
   * @param claimed - the messages the turn's first step claimed
   * @returns the settings
   */
  forTurn(claimed: readonly UserMessage[]): TurnSettings {
    this.#fold()
    const agentLimit = this.#options.maxSteps ?? defaultMaxSteps
    for (const message of claimed) {
      const logged = this.#logged.get(message.id)
      if (logged === undefined) continue
      this.#logged.delete(message.id)
      const spec = this.#specs.get(message.id)
      this.#specs.delete(message.id)
      const format = logged.responseFormat
      return {
        maxSteps:
          logged.maxSteps === undefined
            ? agentLimit
            : logged.maxSteps === null
              ? Number.POSITIVE_INFINITY
              : logged.maxSteps,
        output: format === undefined ? undefined : (spec ?? outputSpecFromFormat(format)),
        outputRepairs: logged.outputRepairs ?? defaultOutputRepairs,
      }
    }
    return { maxSteps: agentLimit, output: undefined, outputRepairs: defaultOutputRepairs }
  }

  /** Reads the `agent/run-options` events logged since the last fold. */
  #fold(): void {
    const length = this.#session.length
    if (this.#cursor === length) return
    for (const event of this.#session.slice(this.#cursor)) {
      if (event.type !== 'agent/run-options') continue
      const data = event.data as unknown as AgentRunOptionsData
      this.#logged.set(data.messageId, data)
    }
    this.#cursor = length
  }
}
