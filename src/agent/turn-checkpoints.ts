import type { FlushCheckpoint } from '../session/flush-checkpoint.js'
import type { SessionRegistry } from '../session/session-registry.js'
import type { Session } from '../session/session.js'
import { raceTurnSignal } from './race-turn-signal.js'

/**
 * The durability checkpoints of one agent's turns (before a model request, before a tool runs,
 * between steps, at turn end). Each waits for the session's flush, raced against the turn
 * signal: storage that hangs cannot keep a cancelled turn running. A flush given up that way
 * keeps going; its events stay queued and are written when storage answers (or time out with
 * the write timeout), and the turn's end does not wait for it again.
 *
 * @internal
 */
export class TurnCheckpoints {
  readonly #sessions: SessionRegistry
  readonly #session: Session
  /** Turn signals that won a race against a flush: that turn's storage is not answering. */
  readonly #stalled = new WeakSet<AbortSignal>()

  /**
   * @param sessions - the session registry, whose flush is the barrier
   * @param session - the agent's session
   */
  constructor(sessions: SessionRegistry, session: Session) {
    this.#sessions = sessions
    this.#session = session
  }

  /**
   * A checkpoint inside the turn: resolves once everything logged is stored.
   *
   * @param signal - the turn signal
   * @param checkpoint - which checkpoint this is (persistence decides from it whether to sync
   *   now or leave that to the next one)
   * @throws (as a rejection) the flush error, or the signal's reason when the turn is cancelled
   *   while the flush is pending
   */
  async within(signal: AbortSignal, checkpoint: FlushCheckpoint = 'before-request'): Promise<void> {
    const flushing = this.#sessions.flush(this.#session, { checkpoint })
    try {
      await raceTurnSignal(flushing, signal)
    } catch (error) {
      if (signal.aborted && error === signal.reason) this.#stalled.add(signal)
      throw error
    }
  }

  /**
   * The checkpoint before a tool runs: like {@link TurnCheckpoints.within}, except that a cancel
   * resolves it (the tool pipeline sees the aborted signal and does not run the tool), so the
   * call ends aborted rather than failed.
   *
   * @param signal - the turn signal
   * @throws (as a rejection) the flush error
   */
  async beforeTool(signal: AbortSignal): Promise<void> {
    try {
      await this.within(signal, 'before-tool')
    } catch (error) {
      if (signal.aborted && error === signal.reason) return
      throw error
    }
  }

  /**
   * The checkpoint after `turn/end`: waits for the flush (bounded by the write timeout), unless an
   * earlier checkpoint of this turn was given up on cancel. Then storage is known not to answer,
   * so the turn ends now and its last events (`turn/end` included) stay queued, written when
   * storage answers, or by `agent.dispose()` and `harness.close()`, which report them if it never
   * does.
   *
   * @param signal - the turn signal
   * @throws (as a rejection) the flush error
   */
  async end(signal: AbortSignal): Promise<void> {
    if (this.#stalled.has(signal)) return
    await this.#sessions.flush(this.#session, { checkpoint: 'turn-end' })
  }
}
