import { InvalidMessageError } from '../errors/agent-errors.js'
import { renderPrompt } from '../prompt/render-prompt.js'
import type { UserMessage } from '../session/message.js'
import { userMessageSchema } from '../session/message.js'
import type { PreStepDecision } from './agent-loop-events.js'
import type { LoopHost } from './loop-host.js'
import { runStep } from './run-step.js'
import { raceTurnSignal } from './race-turn-signal.js'
import { abortCheck, type TurnEnd, turnEndOf } from './turn-end.js'

/** What a finished turn reports to the driver. */
export interface TurnOutcome extends TurnEnd {
  /** The last step that opened, if any. */
  readonly step: number | undefined
  /** What unwound the turn, when something did. */
  readonly thrown: { readonly error: unknown } | undefined
}

function checkEntered(decision: PreStepDecision): readonly UserMessage[] | undefined {
  const shaped = typeof decision === 'object' && decision !== null
  if (shaped && decision.kind === 'reject') return undefined
  if (!shaped || decision.kind !== 'enter' || !Array.isArray(decision.messages)) {
    throw new InvalidMessageError({
      field: 'messages',
      value: decision,
      reason: "agent/pre-step must return { kind: 'enter', messages } or { kind: 'reject' }",
    })
  }
  decision.messages.forEach((message, index) => {
    const parsed = userMessageSchema.safeParse(message)
    if (!parsed.success) {
      throw new InvalidMessageError({
        field: `messages[${index}]`,
        value: message,
        reason: parsed.error.issues[0]?.message ?? 'is not a user message',
      })
    }
  })
  return decision.messages
}

/**
 * Runs the step loop of one open turn and computes its end reason. Never
 * throws: what unwinds the loop is folded into the outcome. Does not log `turn/start` or
 * `turn/end` (the driver does).
 *
 * @param host - the agent's loop host
 * @param turn - the open turn
 * @param signal - the turn signal
 * @returns the end reason, the last step and what was thrown
 */
export async function runTurn(host: LoopHost, turn: number, signal: AbortSignal): Promise<TurnOutcome> {
  let step = 0
  let opened: number | undefined
  let owed = false
  let blocked = false
  let maxTokens = false
  let thrown: { readonly error: unknown } | undefined
  try {
    for (;;) {
      abortCheck(signal)
      const first = step === 0
      const claimed = host.inbox.claim({ firstStep: first, turn })
      // Every listener await is raced against the turn signal: one that ignores it cannot hold a cancel up.
      const assembly = await raceTurnSignal(
        host.systemPrompt.assemble({ agent: host.agent, scope: host.agent, signal }),
        signal,
      )
      abortCheck(signal)
      const rendered = assembly.contexts.map((context) => ({
        name: context.name,
        text: renderPrompt([context], assembly.variables, { kind: 'context' }),
      }))
      const candidate = host.projection.project(rendered)
      // The payload holds the claimed messages; only the default decision adds the runtime-context
      // candidate after them, so a listener that enters its own list drops it.
      const decision = await raceTurnSignal(
        host.ctx.waterfall(
          'agent/pre-step',
          { agent: host.agent, turn, step: step + 1, messages: claimed, signal },
          (payload): PreStepDecision => ({
            kind: 'enter',
            messages: candidate === undefined ? payload.messages : Object.freeze([...payload.messages, candidate]),
          }),
          { scope: host.agent },
        ),
        signal,
      )
      abortCheck(signal)
      const entered = checkEntered(decision)
      if (entered === undefined) {
        blocked = true
        break
      }
      if (entered.length === 0 && (first || !owed)) break
      step++
      opened = step
      const outcome = await runStep(host, { turn, step, messages: entered, assembly, signal })
      abortCheck(signal)
      if (outcome === 'max-tokens') maxTokens = true
      owed = outcome === 'owed'
      if (!owed && host.inbox.nextStep.length === 0) {
        const reason = turnEndOf({ signal, thrown: undefined, blocked, maxTokens }).reason
        await raceTurnSignal(
          host.ctx.serial('agent/turn-stopping', { agent: host.agent, turn, reason, signal }, { scope: host.agent }),
          signal,
        )
        abortCheck(signal)
        if (host.inbox.nextStep.length === 0) break
      }
      await host.sessions.flush(host.session)
    }
  } catch (error) {
    thrown = { error }
  }
  return { ...turnEndOf({ signal, thrown, blocked, maxTokens }), step: opened, thrown }
}
