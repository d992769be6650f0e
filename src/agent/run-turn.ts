import { InvalidMessageError } from '../errors/agent-errors.js'
import { renderPrompt } from '../prompt/render-prompt.js'
import type { UserMessage } from '../session/message.js'
import { userMessageSchema } from '../session/message.js'
import type { PreStepDecision } from './agent-loop-events.js'
import { loopSerial, loopWaterfall } from './loop-dispatch.js'
import type { LoopHost } from './loop-host.js'
import { runStep } from './run-step.js'
import { raceTurnSignal } from './race-turn-signal.js'
import { outputRepairMessage, stepAnswerText } from './output-repair.js'
import type { TurnSettings } from './run-settings.js'
import { checkAnswer } from './structured-output.js'
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
 * throws: what unwound the loop is folded into the outcome. Does not log `turn/start` or
 * `turn/end` (the driver does).
 *
 * The turn's settings come from its first claimed prompt (a run's `maxSteps` and `output`) or the
 * agent. Step `maxSteps` is the last: its request forbids tool calls, and the turn ends there,
 * `max-steps` when that limit shaped it (tools were offered, a call was dropped, steering was
 * queued or an output repair was still owed), else `completed`. A structured run's answer that is
 * not valid gets up to `outputRepairs` repair steps, each opened by a message that lists the issues.
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
  let maxStepsLimit: number | undefined
  let thrown: { readonly error: unknown } | undefined
  let settings: TurnSettings | undefined
  let repairsLeft = 0
  let repair: UserMessage | undefined
  try {
    for (;;) {
      abortCheck(signal)
      const first = step === 0
      const fromInbox = host.inbox.claim({ firstStep: first, turn })
      if (settings === undefined) {
        settings = host.runSettings.forTurn(fromInbox)
        repairsLeft = settings.outputRepairs
      }
      const claimed = repair === undefined ? fromInbox : Object.freeze([...fromInbox, repair])
      repair = undefined
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
      let trusted: readonly UserMessage[] | undefined
      const decision = await loopWaterfall(
        host,
        'agent/pre-step',
        { agent: host.agent, turn, step: step + 1, messages: claimed, signal },
        (payload): PreStepDecision => {
          const messages = candidate === undefined ? payload.messages : Object.freeze([...payload.messages, candidate])
          // Messages a listener passed through `next(replacement)` are not trusted.
          if (payload.messages === claimed) trusted = messages
          return { kind: 'enter', messages }
        },
        signal,
      )
      abortCheck(signal)
      // The default decision holds the claimed messages (validated when queued) and the projection's
      // candidate: only a listener's own decision needs the check.
      const entered =
        trusted !== undefined && decision?.kind === 'enter' && decision.messages === trusted
          ? trusted
          : checkEntered(decision)
      if (entered === undefined) {
        blocked = true
        break
      }
      if (entered.length === 0 && (first || !owed)) break
      step++
      opened = step
      const last = step >= settings.maxSteps
      const outcome = await runStep(host, {
        turn,
        step,
        messages: entered,
        assembly,
        forbidCalls: last,
        responseFormat: settings.output?.responseFormat,
        signal,
      })
      abortCheck(signal)
      if (outcome === 'max-tokens') maxTokens = true
      owed = outcome === 'owed'
      let repairOwed = false
      if (settings.output !== undefined && (outcome === 'completed' || outcome === 'stopped')) {
        const check = checkAnswer(stepAnswerText(host.session, turn, step), settings.output)
        if (!check.ok && repairsLeft > 0) {
          if (last) repairOwed = true
          else {
            repairsLeft--
            repair = outputRepairMessage(check.issues, host.ids('message'))
          }
        }
      }
      if (last) {
        const shaped =
          assembly.tools.length > 0 || outcome === 'stopped' || repairOwed || host.inbox.nextStep.length > 0
        if (shaped) maxStepsLimit = settings.maxSteps
      }
      if (repair === undefined && (last || (!owed && host.inbox.nextStep.length === 0))) {
        const reason = turnEndOf({ signal, thrown: undefined, blocked, maxTokens, maxStepsLimit }).reason
        await loopSerial(host, 'agent/turn-stopping', { agent: host.agent, turn, reason, signal }, signal)
        abortCheck(signal)
        // At the limit the turn ends whatever a listener queued: that work waits for the next turn.
        if (last || host.inbox.nextStep.length === 0) break
      }
      // Written now (a failure ends the turn before the next step is derived); synced with the
      // next step's request checkpoint, which follows with only that step's opening events.
      await host.checkpoints.within(signal, 'between-steps')
    }
  } catch (error) {
    thrown = { error }
  }
  return { ...turnEndOf({ signal, thrown, blocked, maxTokens, maxStepsLimit }), step: opened, thrown }
}
