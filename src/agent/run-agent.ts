import { RunDiscardedError } from '../errors/agent-errors.js'
import type { AssistantMessageData, TurnEndData } from '../session/core-event-types.js'
import type { Message } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { TokenUsage } from '../session/stream-chunk.js'
import type { Agent, RunOptions, TurnResult } from './agent.js'
import type { UserMessageInput } from './user-message-input.js'

/** A finished turn as the driver reports it to `agent.run()`. */
export interface TurnEndNotice {
  /** The turn. */
  readonly turn: number
  /** The seq of its `turn/start`. */
  readonly startSeq: number
  /** Its `turn/end` data. */
  readonly end: TurnEndData
}

/** What `agent.run()` needs from the driver beyond the public handle: a `turn/end` hook. */
export interface RunPort {
  /**
   * Calls `listener` after every `turn/end` this driver logs.
   *
   * @param listener - the listener
   * @returns a remover
   */
  onTurnEnd(listener: (notice: TurnEndNotice) => void): () => void
}

function addUsage(total: TokenUsage, usage: TokenUsage | undefined): TokenUsage {
  if (usage === undefined) return total
  return { inputTokens: total.inputTokens + usage.inputTokens, outputTokens: total.outputTokens + usage.outputTokens }
}

/**
 * The {@link TurnResult} of a turn (09-api.md A1): its surface messages, the text of its assistant
 * messages joined with `'\n'`, and the summed usage. Built from the log between `turn/start` and
 * `turn/end`, so it is lossless JSON.
 *
 * @param session - the agent's session
 * @param notice - the finished turn
 * @returns the result
 */
export function turnResultOf(session: Session, notice: TurnEndNotice): TurnResult {
  const messages: Message[] = []
  const texts: string[] = []
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 }
  for (const event of session.slice(notice.startSeq)) {
    if (event.type === 'user/message') messages.push(event.data as unknown as Message)
    else if (event.type === 'tool/result') messages.push((event.data as unknown as { readonly message: Message }).message)
    else if (event.type === 'assistant/message') {
      const data = event.data as unknown as AssistantMessageData
      usage = addUsage(usage, data.usage)
      if (data.message.content.length > 0) messages.push(data.message)
      for (const block of data.message.content) if (block.type === 'text') texts.push(block.text)
    } else if (event.type === 'turn/end') break
  }
  const { end } = notice
  return { turn: notice.turn, reason: end.reason, ...(end.cause === undefined ? {} : { cause: end.cause }), text: texts.join('\n'), messages, usage }
}

/**
 * `agent.run(input)` (04-agent.md §14): queues a prompt with `followup` and resolves with the
 * result of the turn that claims it; rejects {@link RunDiscardedError} when it is discarded first.
 *
 * @param agent - the agent
 * @param port - the driver's turn-end notifications
 * @param input - the prompt
 * @param options - an abort signal
 * @returns the turn result
 */
export function runAgentTurn(agent: Agent, port: RunPort, input: UserMessageInput, options: RunOptions): Promise<TurnResult> {
  return new Promise<TurnResult>((resolve, reject) => {
    let claimedTurn: number | undefined
    let messageId: string | undefined
    const cleanups: (() => void)[] = []
    const settle = (action: () => void): void => {
      for (const cleanup of cleanups.splice(0)) cleanup()
      action()
    }
    cleanups.push(
      agent.ctx.on('agent/inbox/claimed', (payload) => {
        if (payload.message.id === messageId) claimedTurn = payload.turn
      }),
      agent.ctx.on('agent/inbox/discarded', (payload) => {
        if (payload.message.id !== messageId) return
        const id = payload.message.id
        settle(() => reject(new RunDiscardedError({ reason: agent.disposed ? 'disposed' : 'canceled', messageId: id })))
      }),
      port.onTurnEnd((notice) => {
        if (notice.turn === claimedTurn) settle(() => resolve(turnResultOf(agent.session, notice)))
      }),
    )
    const signal = options.signal
    if (signal !== undefined) {
      const onAbort = (): void => {
        if (claimedTurn === undefined && messageId !== undefined) agent.inbox.remove(messageId)
        else agent.cancel({ kind: 'user' }, { keepInbox: true })
      }
      signal.addEventListener('abort', onAbort, { once: true })
      cleanups.push(() => signal.removeEventListener('abort', onAbort))
    }
    try {
      messageId = agent.send(input, 'next-turn', false).id
      agent.wake()
    } catch (error) {
      settle(() => reject(error))
    }
  })
}
