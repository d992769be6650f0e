import type { AssistantMessageData } from '../session/core-event-types.js'
import type { PluginMessageSource, UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { OutputIssue } from '../errors/output-validation-error.js'
import { repairText } from './structured-output.js'

/** The source of an output-repair message: the agent loop wrote it, not the user. */
export const outputRepairSource: PluginMessageSource = Object.freeze({
  kind: 'plugin',
  plugin: 'agent-loop',
  form: 'output-repair',
})

/**
 * The text of a step's answer: the text blocks of its last `assistant/message`, joined with
 * `'\n'`; `''` when it has none. Scans back from the end of the log, so it is O(events of the step).
 *
 * @param session - the agent's session
 * @param turn - the turn
 * @param step - the step
 * @returns the answer's text
 * @internal
 */
export function stepAnswerText(session: Session, turn: number, step: number): string {
  for (let seq = session.length - 1; seq >= 0; seq--) {
    const event = session.at(seq)
    if (event === undefined || event.type === 'step/start') break
    if (event.type !== 'assistant/message') continue
    const data = event.data as unknown as AssistantMessageData
    if (data.turn !== turn || data.step !== step) break
    return answerTextOf(data)
  }
  return ''
}

/**
 * The text blocks of an assistant message, joined with `'\n'`.
 *
 * @param data - the `assistant/message` payload
 * @returns the text
 * @internal
 */
export function answerTextOf(data: AssistantMessageData): string {
  return data.message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
}

/**
 * The message of a repair step: it shows the model the issues of its last answer. Logged as a
 * `user/message` when the step opens, so the log holds exactly what the model saw.
 *
 * @param issues - the answer's issues
 * @param id - a fresh message id
 * @returns the frozen message
 * @internal
 */
export function outputRepairMessage(issues: readonly OutputIssue[], id: string): UserMessage {
  return Object.freeze({
    id,
    role: 'user',
    content: Object.freeze([Object.freeze({ type: 'text', text: repairText(issues) })]),
    source: outputRepairSource,
  })
}
