import { ErrorCode } from '../errors/codes.js'
import type { SessionErrorLocation } from '../errors/session-error.js'
import { StructureError, type StructureErrorCode, type StructureErrorFields } from '../errors/structure-error.js'
import type { SessionEventTypeDefinition } from './core-event-types.js'
import type { JsonValue } from './json-value.js'
import type { SessionEvent } from './session-event.js'

/** The turn state of a session: what `session.turnState()` returns. */
export interface TurnState {
  /** The open turn, or `null`. */
  readonly openTurn: number | null
  /** The open step, or `null`. */
  readonly openStep: number | null
  /** The number the next `turn/start` must carry. */
  readonly nextTurn: number
  /** The open step's unanswered tool calls, in the order they were first mentioned. */
  readonly pendingCallIds: readonly string[]
}

interface CallRow {
  requested: boolean
  started: boolean
  answered: boolean
}

interface Numbered {
  readonly turn: number
  readonly step?: number
}

interface MessageLike {
  readonly id: string
  readonly content: readonly { readonly type: string; readonly id?: string }[]
  readonly source: { readonly callId?: string }
}

function fail(
  code: StructureErrorCode,
  where: SessionErrorLocation,
  detail: string,
  fields: StructureErrorFields = {},
): StructureError {
  return new StructureError({ code, detail, ...where, ...fields })
}

/** The id of a message event, for `MESSAGE_ID_REUSED`. */
function messageIdOf(event: SessionEvent): string {
  const data = event.data as { readonly id?: string; readonly message?: MessageLike }
  return event.type === 'user/message' ? String(data.id) : String(data.message?.id)
}

/** Tool-call block ids of an assistant message event's data, in block order. */
export function toolCallIdsOf(data: JsonValue): string[] {
  const message = (data as { readonly message?: MessageLike }).message
  const ids: string[] = []
  if (message === undefined) return ids
  for (const block of message.content) if (block.type === 'tool-call' && block.id !== undefined) ids.push(block.id)
  return ids
}

/**
 * @internal The built-in structure rules: turn/step nesting and numbering, the open step's
 * tool-call table, message-id uniqueness and the header reason rule. `check` throws and changes
 * nothing; `apply` runs at commit.
 */
export class StructureState {
  openTurn: number | null = null
  openStep: number | null = null
  nextTurn = 1
  nextStep = 1
  readonly calls = new Map<string, CallRow>()
  readonly messageIds = new Set<string>()
  hasHeader = false
  #turnState: TurnState | undefined

  /**
   * Checks one candidate event against the rules. `headerDiffers` answers the `change` reason
   * rule for a `request/header` candidate.
   */
  check(
    event: SessionEvent,
    definition: SessionEventTypeDefinition | undefined,
    where: SessionErrorLocation,
    headerDiffers: () => boolean,
  ): void {
    const type = event.type
    const data = event.data as unknown as Numbered
    switch (type) {
      case 'turn/start':
        if (this.openTurn !== null) {
          throw fail(ErrorCode.TURN_OPEN, where, `turn ${this.openTurn} is still open`, {
            expected: null,
            actual: data.turn,
          })
        }
        if (data.turn !== this.nextTurn) {
          throw fail(ErrorCode.TURN_NUMBER, where, `expected turn ${this.nextTurn}, got ${data.turn}`, {
            expected: this.nextTurn,
            actual: data.turn,
          })
        }
        return
      case 'turn/end':
        this.#requireTurn(data, where)
        if (this.openStep !== null) {
          throw fail(ErrorCode.STEP_OPEN, where, `step ${this.openStep} of turn ${this.openTurn} is still open`, {
            expected: null,
            actual: this.openStep,
          })
        }
        return
      case 'step/start':
        this.#requireTurn(data, where)
        if (this.openStep !== null) {
          throw fail(ErrorCode.STEP_OPEN, where, `step ${this.openStep} of turn ${this.openTurn} is still open`, {
            expected: null,
            actual: data.step,
          })
        }
        if (data.step !== this.nextStep) {
          throw fail(ErrorCode.STEP_NUMBER, where, `expected step ${this.nextStep}, got ${data.step}`, {
            expected: this.nextStep,
            actual: data.step,
          })
        }
        return
      case 'step/end': {
        this.#requireStep(data, where)
        const pending = this.#pending()
        if (pending.length > 0) {
          throw fail(
            ErrorCode.UNANSWERED_TOOL_CALL,
            where,
            `turn ${this.openTurn} step ${this.openStep} has unanswered tool calls: ${pending.map((id) => `"${id}"`).join(', ')}`,
            { callIds: pending },
          )
        }
        return
      }
      case 'assistant/chunk':
        this.#requireStep(data, where)
        return
      case 'assistant/message':
        this.#requireStep(data, where)
        if (event.surfaceOp === 'append') {
          const seen = new Set<string>()
          for (const callId of toolCallIdsOf(event.data)) {
            if (seen.has(callId) || this.calls.has(callId)) {
              throw fail(
                ErrorCode.DUPLICATE_TOOL_CALL,
                where,
                `tool call "${callId}" is already in turn ${this.openTurn} step ${this.openStep}`,
                { callId },
              )
            }
            seen.add(callId)
          }
        }
        this.#checkMessageId(event, where)
        return
      case 'tool/call': {
        this.#requireStep(data, where)
        const callId = (event.data as unknown as { readonly callId: string }).callId
        if (this.calls.get(callId)?.started === true) {
          throw fail(
            ErrorCode.DUPLICATE_TOOL_CALL,
            where,
            `tool call "${callId}" was already started in turn ${this.openTurn} step ${this.openStep}`,
            { callId },
          )
        }
        return
      }
      case 'tool/result': {
        if (event.surfaceOp !== 'append') {
          if (this.openTurn === null)
            throw fail(ErrorCode.NO_OPEN_TURN, where, 'a tool-result rewrite needs an open turn')
          return
        }
        this.#requireStep(data, where)
        const result = event.data as unknown as {
          readonly message: MessageLike
          readonly error?: { readonly code: string }
        }
        const callId = String(result.message.source.callId)
        const row = this.calls.get(callId)
        const notStarted = result.error?.code === 'TOOL_NOT_STARTED'
        const answerable = row !== undefined && !row.answered && (row.started || (notStarted && row.requested))
        if (!answerable) {
          throw fail(
            ErrorCode.UNKNOWN_TOOL_CALL,
            where,
            row?.answered === true
              ? `tool result answers call "${callId}", which turn ${this.openTurn} step ${this.openStep} already answered`
              : `tool result answers call "${callId}", but turn ${this.openTurn} step ${this.openStep} has no tool/call for it`,
            { callId },
          )
        }
        this.#checkMessageId(event, where)
        return
      }
      case 'user/message':
        this.#checkMessageId(event, where)
        return
      case 'request/header': {
        if (this.openTurn === null) throw fail(ErrorCode.NO_OPEN_TURN, where, 'request/header needs an open turn')
        const reason = (event.data as unknown as { readonly reason: string }).reason
        if (reason === 'initial' && this.hasHeader) {
          throw fail(ErrorCode.HEADER_REASON, where, `reason 'initial' but the log already has a request/header`, {
            actual: reason,
          })
        }
        if (reason !== 'initial' && !this.hasHeader) {
          throw fail(ErrorCode.HEADER_REASON, where, `reason '${reason}' but the log has no earlier request/header`, {
            actual: reason,
          })
        }
        if (reason === 'change' && !headerDiffers()) {
          throw fail(ErrorCode.HEADER_REASON, where, `reason 'change' but the header equals the current one`, {
            actual: reason,
          })
        }
        return
      }
      case 'request/context':
        if (this.openTurn === null) throw fail(ErrorCode.NO_OPEN_TURN, where, 'request/context needs an open turn')
        return
      default:
        if (definition === undefined || definition.core) return
        if (definition.enclosure === 'turn' && this.openTurn === null) {
          throw fail(ErrorCode.NO_OPEN_TURN, where, `${type} needs an open turn`)
        }
        if (definition.enclosure === 'step' && this.openStep === null) {
          throw fail(ErrorCode.NO_OPEN_STEP, where, `${type} needs an open step`)
        }
    }
  }

  /** Applies a committed event. */
  apply(event: SessionEvent): void {
    const data = event.data as unknown as Numbered
    switch (event.type) {
      case 'turn/start':
        this.openTurn = data.turn
        this.openStep = null
        this.nextTurn = data.turn + 1
        this.nextStep = 1
        this.calls.clear()
        break
      case 'turn/end':
        this.openTurn = null
        this.openStep = null
        this.calls.clear()
        break
      case 'step/start':
        this.openStep = data.step ?? null
        this.nextStep = (data.step ?? 0) + 1
        this.calls.clear()
        break
      case 'step/end':
        this.openStep = null
        this.calls.clear()
        break
      case 'assistant/message':
        if (event.surfaceOp === 'append') {
          for (const callId of toolCallIdsOf(event.data)) {
            const row = this.calls.get(callId)
            if (row === undefined) this.calls.set(callId, { requested: true, started: false, answered: false })
            else row.requested = true
          }
        }
        this.messageIds.add(messageIdOf(event))
        break
      case 'tool/call': {
        const callId = (event.data as unknown as { readonly callId: string }).callId
        const row = this.calls.get(callId)
        if (row === undefined) this.calls.set(callId, { requested: false, started: true, answered: false })
        else row.started = true
        break
      }
      case 'tool/result':
        if (event.surfaceOp === 'append') {
          const callId = String((event.data as unknown as { readonly message: MessageLike }).message.source.callId)
          const row = this.calls.get(callId)
          if (row !== undefined) row.answered = true
          this.messageIds.add(messageIdOf(event))
        }
        break
      case 'user/message':
        this.messageIds.add(messageIdOf(event))
        break
      case 'request/header':
        this.hasHeader = true
        break
      default:
        return
    }
    this.#turnState = undefined
  }

  /** The frozen turn state, cached until the next structural change. */
  turnState(): TurnState {
    this.#turnState ??= Object.freeze({
      openTurn: this.openTurn,
      openStep: this.openStep,
      nextTurn: this.nextTurn,
      pendingCallIds: Object.freeze(this.#pending()),
    })
    return this.#turnState
  }

  #pending(): string[] {
    const pending: string[] = []
    for (const [callId, row] of this.calls) if (!row.answered) pending.push(callId)
    return pending
  }

  #checkMessageId(event: SessionEvent, where: SessionErrorLocation): void {
    if (event.type === 'tool/result' && event.surfaceOp !== 'append') return
    const id = messageIdOf(event)
    if (this.messageIds.has(id)) {
      throw fail(ErrorCode.MESSAGE_ID_REUSED, where, `message id "${id}" was already used by an earlier message`, {
        messageId: id,
      })
    }
  }

  #requireTurn(data: Numbered, where: SessionErrorLocation): void {
    if (this.openTurn === null)
      throw fail(ErrorCode.NO_OPEN_TURN, where, `turn ${data.turn} is not open: no turn is`, { actual: data.turn })
    if (data.turn !== this.openTurn) {
      throw fail(ErrorCode.TURN_MISMATCH, where, `names turn ${data.turn}, but turn ${this.openTurn} is open`, {
        expected: this.openTurn,
        actual: data.turn,
      })
    }
  }

  /** A step-level event names the open step (turn and step): `NO_OPEN_STEP` / `STEP_MISMATCH`. */
  #requireStep(data: Numbered, where: SessionErrorLocation): void {
    if (this.openStep === null) {
      const open = this.openTurn === null ? 'no turn is open' : `turn ${this.openTurn} has no open step`
      throw fail(ErrorCode.NO_OPEN_STEP, where, `${open} (event names turn ${data.turn} step ${data.step})`, {
        actual: { turn: data.turn, step: data.step },
      })
    }
    if (data.turn !== this.openTurn || data.step !== this.openStep) {
      throw fail(
        ErrorCode.STEP_MISMATCH,
        where,
        `names turn ${data.turn} step ${data.step}, but turn ${this.openTurn} step ${this.openStep} is open`,
        {
          expected: { turn: this.openTurn, step: this.openStep },
          actual: { turn: data.turn, step: data.step },
        },
      )
    }
  }
}
