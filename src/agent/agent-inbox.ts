import { DuplicateMessageError } from '../errors/agent-errors.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { type Clock, type IdSource, randomIds, systemClock } from '../kernel/host-services.js'
import type { AgentInboxSplicedData } from '../session/core-event-types.js'
import type { UserMessage } from '../session/message.js'
import type { Session } from '../session/session.js'
import type { AgentEvents } from './agent-events.js'
import { PendingList } from './pending-list.js'
import { normalizeUserMessage, type UserMessageInput } from './user-message-input.js'

/** Which inbox list: `next-turn` (one prompt per turn, FIFO) or `next-step` (all, at the next step boundary). */
export type InboxTarget = 'next-turn' | 'next-step'

/** One inbox notification as `[name, payload]`: `inserted`/`discarded` carry `{ message }`, `claimed` `{ message, turn }`. */
export type InboxNotification = {
  [N in keyof AgentEvents]: [name: N, payload: AgentEvents[N]['payload']]
}[keyof AgentEvents]

/**
 * Delivers one inbox notification; the inbox's owner supplies it, e.g.
 * `(name, payload) => ctx.emit(name, payload)`.
 */
export type InboxEmit = (...notification: InboxNotification) => void

/** One pending message as {@link InboxView.list} reports it. */
export interface InboxEntry {
  /** The pending message (frozen). */
  readonly message: UserMessage
  /** The list that holds it. */
  readonly target: InboxTarget
  /**
   * When it was queued: the `time` of the `agent/inbox/spliced` event that inserted it (epoch
   * milliseconds from the harness clock), so it survives a restart.
   */
  readonly queuedAt: number
  /** How long it has waited when listed: the harness clock's `now()` minus `queuedAt`, never negative. */
  readonly ageMs: number
}

/** The inbox as the agent exposes it (`agent.inbox`). */
export interface InboxView {
  /** The pending next-turn prompts, oldest first (frozen; the same array until the list changes). */
  readonly nextTurn: readonly UserMessage[]
  /** The pending next-step messages, oldest first (frozen; the same array until the list changes). */
  readonly nextStep: readonly UserMessage[]
  /** Whether either list holds a message. */
  readonly hasPending: boolean
  /**
   * Lists every pending message with its age, in claim order: next-step first, then next-turn,
   * each oldest first. Prompts replayed by a resume keep the time they were first queued, so a
   * caller can tell a stale prompt from before a restart.
   *
   * @returns fresh frozen entries (empty when nothing is pending)
   * @example
   * ```ts
   * const stale = agent.inbox.list().filter((entry) => entry.ageMs > 60_000)
   * for (const entry of stale) agent.inbox.remove(entry.message.id)
   * ```
   */
  list(): readonly InboxEntry[]
  /**
   * Cancels a pending message: a canceled deletion splice, then `agent/inbox/discarded`.
   *
   * @param id - the message id
   * @returns `false` (and nothing logged) when `id` is not pending
   * @throws the append's error (nothing changed)
   */
  remove(id: string): boolean
  /**
   * Replaces a pending message in place (same list, same position): one canceled splice removing
   * it and inserting the new message, then `discarded(old)`, `inserted(new)`.
   *
   * @param id - the pending message id
   * @param input - the replacement, normalized with a fresh id
   * @returns the new frozen message, or `false` (nothing logged) when `id` is not pending
   * @throws {@link InvalidMessageError} for bad input (even when `id` is not pending), {@link DuplicateMessageError}, the append's error (nothing changed)
   */
  replace(id: string, input: UserMessageInput): UserMessage | false
  /**
   * Cancels everything pending: next-step first, then next-turn, one canceled deletion splice per
   * non-empty list, then `discarded` per message in that order.
   *
   * @returns the discarded messages (frozen)
   * @throws the append's error; a list already spliced stays cleared and its messages are notified
   */
  clear(): readonly UserMessage[]
}

/** Options of {@link AgentInbox}. */
export interface AgentInboxOptions {
  /** The session whose `agent/inbox/spliced` events the inbox projects; the inbox must be their only writer. */
  readonly session: Session
  /** Delivers `agent/inbox/inserted`, `discarded` and `claimed`; must not throw (`ctx.emit` contains listener failures). */
  readonly emit: InboxEmit
  /**
   * Makes the ids of replacement messages (kind `'message'`).
   *
   * @default random UUIDs
   */
  readonly ids?: IdSource
  /**
   * The clock {@link AgentInbox.list} measures ages with: the harness clock, the one that stamps
   * the session's events.
   *
   * @default the system clock
   */
  readonly clock?: Clock
}

/** What {@link AgentInbox.claim} takes. */
export interface ClaimOptions {
  /** Whether this is the first step of the turn: only then one next-turn prompt is claimed too. */
  readonly firstStep: boolean
  /** The claiming turn (positive), carried by `agent/inbox/claimed`. */
  readonly turn: number
}

/**
 * An agent's inbox: two ordered lists projected from the session's durable
 * `agent/inbox/spliced` events. Construction replays every splice after the inherited prefix
 * (`header.seedLength`); afterwards each operation appends its splice first and changes the lists
 * only once the append returned (a failing append changes nothing and is rethrown), then notifies.
 * Message ids are unique across both lists. `send` is O(1) amortized, a claim O(batch).
 *
 * @example
 * ```ts
 * const inbox = new AgentInbox({ session, emit: (name, payload) => ctx.emit(name, payload) })
 * inbox.insert(normalizeUserMessage('hi', 'm1'), 'next-turn')
 * inbox.claim({ firstStep: true, turn: 1 }) // [the 'hi' message]
 * ```
 */
export class AgentInbox implements InboxView {
  readonly #session: Session
  readonly #emit: InboxEmit
  readonly #ids: IdSource
  readonly #clock: Clock
  readonly #lists: Readonly<Record<InboxTarget, PendingList>> = {
    'next-turn': new PendingList(),
    'next-step': new PendingList(),
  }
  /** Pending id → how many pending messages carry it (more than one only in a hand-made log). */
  readonly #pending = new Map<string, number>()
  /** Each pending message (by identity: every splice's messages are its own copies) → its splice's `time`. */
  readonly #queuedAt = new WeakMap<UserMessage, number>()

  /**
   * Replays the session's splices after `header.seedLength` (O(log)).
   *
   * @param options - the session, the notifier and the id source
   * @throws {@link InvalidArgumentError} when `session` or `emit` is missing
   */
  constructor(options: AgentInboxOptions) {
    const session: unknown = options?.session
    if (typeof session !== 'object' || session === null || typeof (session as Session).append !== 'function') {
      throw new InvalidArgumentError({ argument: 'options.session', reason: 'must be a Session', value: session })
    }
    if (typeof options.emit !== 'function') {
      throw new InvalidArgumentError({ argument: 'options.emit', reason: 'must be a function', value: options.emit })
    }
    this.#session = options.session
    this.#emit = options.emit
    this.#ids = options.ids ?? randomIds()
    this.#clock = options.clock ?? systemClock()
    const length = this.#session.length
    for (let seq = Math.min(this.#session.header.seedLength ?? 0, length); seq < length; seq++) {
      const event = this.#session.at(seq)
      if (event?.type === 'agent/inbox/spliced') this.#apply(event.data as unknown as AgentInboxSplicedData, event.time)
    }
  }

  /** The pending next-turn prompts, oldest first (frozen; the same array until the list changes). */
  get nextTurn(): readonly UserMessage[] {
    return this.#lists['next-turn'].view()
  }

  /** The pending next-step messages, oldest first (frozen; the same array until the list changes). */
  get nextStep(): readonly UserMessage[] {
    return this.#lists['next-step'].view()
  }

  /** Whether either list holds a message. */
  get hasPending(): boolean {
    return this.#lists['next-turn'].length > 0 || this.#lists['next-step'].length > 0
  }

  /** {@inheritDoc InboxView.list} */
  list(): readonly InboxEntry[] {
    const now = this.#clock.now()
    const entries: InboxEntry[] = []
    for (const target of ['next-step', 'next-turn'] as const) {
      for (const message of this.#lists[target].view()) {
        const queuedAt = this.#queuedAt.get(message) ?? now
        entries.push(Object.freeze({ message, target, queuedAt, ageMs: Math.max(0, now - queuedAt) }))
      }
    }
    return Object.freeze(entries)
  }

  /**
   * Whether a message with this id is pending in either list.
   *
   * @param id - a message id
   * @returns `true` when pending
   */
  has(id: string): boolean {
    return this.#pending.has(id)
  }

  /**
   * Queues a message at the end of `target` (`send`): an insertion splice,
   * then `agent/inbox/inserted`.
   *
   * @param message - a valid message, e.g. from {@link normalizeUserMessage}
   * @param target - the list
   * @returns the queued message: the committed, frozen copy
   * @throws {@link DuplicateMessageError} (`DUPLICATE_MESSAGE_ID`) when its id is pending, {@link InvalidArgumentError} for an unknown target, the append's error (`SessionEventError` for an invalid message); nothing changed
   */
  insert(message: UserMessage, target: InboxTarget): UserMessage {
    const list = this.#list(target)
    const [inserted] = this.#splice(target, list.length, 0, [message], undefined).inserted
    const stored = inserted as UserMessage
    this.#emit('agent/inbox/inserted', { message: stored })
    return stored
  }

  /** {@inheritDoc InboxView.remove} */
  remove(id: string): boolean {
    const found = this.#find(id)
    if (found === undefined) return false
    const [removed] = this.#splice(found.target, found.index, 1, [], 'canceled').removed
    this.#emit('agent/inbox/discarded', { message: removed as UserMessage })
    return true
  }

  /** {@inheritDoc InboxView.replace} */
  replace(id: string, input: UserMessageInput): UserMessage | false {
    const replacement = normalizeUserMessage(input, this.#ids('message'))
    const found = this.#find(id)
    if (found === undefined) return false
    const result = this.#splice(found.target, found.index, 1, [replacement], 'canceled')
    const stored = result.inserted[0] as UserMessage
    this.#emit('agent/inbox/discarded', { message: result.removed[0] as UserMessage })
    this.#emit('agent/inbox/inserted', { message: stored })
    return stored
  }

  /** {@inheritDoc InboxView.clear} */
  clear(): readonly UserMessage[] {
    const discarded: UserMessage[] = []
    const failure = this.#drain(['next-step', 'next-turn'], Number.POSITIVE_INFINITY, 'canceled', discarded)
    for (const message of discarded) this.#emit('agent/inbox/discarded', { message })
    if (failure !== undefined) throw failure.error
    return Object.freeze(discarded)
  }

  /**
   * Claims the work of a step (driver only): a deletion splice without outcome for all of
   * next-step, then one for the first next-turn prompt when `firstStep`; then
   * `agent/inbox/claimed {message, turn}` per message, next-step items first.
   *
   * @param options - `firstStep` and the claiming `turn`
   * @returns the claimed messages, next-step first (frozen; empty when nothing was pending)
   * @throws {@link InvalidArgumentError} for a bad turn; the append's error (a list already spliced stays claimed and is notified)
   */
  claim(options: ClaimOptions): readonly UserMessage[] {
    const turn: unknown = options?.turn
    if (typeof turn !== 'number' || !Number.isSafeInteger(turn) || turn < 1) {
      throw new InvalidArgumentError({
        argument: 'options.turn',
        reason: 'must be a positive safe integer',
        value: turn,
      })
    }
    const claimed: UserMessage[] = []
    let failure = this.#drain(['next-step'], Number.POSITIVE_INFINITY, undefined, claimed)
    if (failure === undefined && options.firstStep === true) failure = this.#drain(['next-turn'], 1, undefined, claimed)
    for (const message of claimed) this.#emit('agent/inbox/claimed', { message, turn })
    if (failure !== undefined) throw failure.error
    return Object.freeze(claimed)
  }

  /** Deletes up to `count` messages from the head of each target in turn, collecting them; stops at the first failing append. */
  #drain(
    targets: readonly InboxTarget[],
    count: number,
    outcome: 'canceled' | undefined,
    into: UserMessage[],
  ): { readonly error: unknown } | undefined {
    for (const target of targets) {
      try {
        const { removed } = this.#splice(target, 0, count, [], outcome)
        for (const message of removed) into.push(message)
      } catch (error) {
        return { error }
      }
    }
    return undefined
  }

  #list(target: InboxTarget): PendingList {
    if (target !== 'next-turn' && target !== 'next-step') {
      throw new InvalidArgumentError({
        argument: 'target',
        reason: "must be 'next-turn' or 'next-step'",
        value: target,
      })
    }
    return this.#lists[target]
  }

  #find(id: string): { readonly target: InboxTarget; readonly index: number } | undefined {
    if (!this.#pending.has(id)) return undefined
    for (const target of ['next-step', 'next-turn'] as const) {
      const index = this.#lists[target].indexOf(id)
      if (index >= 0) return { target, index }
    }
    return undefined
  }

  /**
   * The one write path: normalizes the coordinates like `Array.prototype.splice`, writes nothing
   * for a no-op, checks the inserted ids, appends, and only then changes the list.
   */
  #splice(
    target: InboxTarget,
    start: number,
    deleteCount: number,
    inserted: readonly UserMessage[],
    outcome: 'canceled' | undefined,
  ): { readonly removed: readonly UserMessage[]; readonly inserted: readonly UserMessage[] } {
    const list = this.#list(target)
    const { actualStart, actualDeleteCount } = normalizeSplice(list.length, start, deleteCount)
    if (actualDeleteCount === 0 && inserted.length === 0) return { removed: [], inserted: [] }
    const seen = new Set<string>()
    for (const message of inserted) {
      if (this.#pending.has(message.id) || seen.has(message.id))
        throw new DuplicateMessageError({ messageId: message.id })
      seen.add(message.id)
    }
    const data: AgentInboxSplicedData = {
      target,
      start: actualStart,
      ...(actualDeleteCount === 0 ? {} : { removedCount: actualDeleteCount }),
      inserted,
      ...(outcome === undefined ? {} : { outcome }),
    }
    const event = this.#session.append('agent/inbox/spliced', data)
    return this.#apply(event.data as unknown as AgentInboxSplicedData, event.time)
  }

  /** Applies one committed splice (committed at `time`) to the lists, the id index and the queue times. */
  #apply(
    data: AgentInboxSplicedData,
    time: number,
  ): {
    readonly removed: readonly UserMessage[]
    readonly inserted: readonly UserMessage[]
  } {
    const list = this.#lists[data.target]
    const { actualStart, actualDeleteCount } = normalizeSplice(list.length, data.start, data.removedCount ?? 0)
    const removed = list.splice(actualStart, actualDeleteCount, data.inserted)
    for (const message of removed) {
      const count = this.#pending.get(message.id) ?? 0
      if (count <= 1) this.#pending.delete(message.id)
      else this.#pending.set(message.id, count - 1)
    }
    for (const message of data.inserted) {
      this.#pending.set(message.id, (this.#pending.get(message.id) ?? 0) + 1)
      this.#queuedAt.set(message, time)
    }
    return { removed, inserted: data.inserted }
  }
}

/** `Array.prototype.splice` coordinates: a relative start clamped to the list, a delete count clamped to what follows it. */
function normalizeSplice(
  length: number,
  start: number,
  deleteCount: number,
): { actualStart: number; actualDeleteCount: number } {
  const relativeStart = Number.isNaN(start) ? 0 : Math.trunc(start)
  const actualStart = relativeStart < 0 ? Math.max(length + relativeStart, 0) : Math.min(relativeStart, length)
  const requested = Number.isNaN(deleteCount) ? 0 : Math.trunc(deleteCount)
  return { actualStart, actualDeleteCount: Math.min(Math.max(requested, 0), length - actualStart) }
}
