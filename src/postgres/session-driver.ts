/**
 * One session as a worker drives it: take its lease by opening its agent, feed it the waiting
 * inbox messages in submit order, and let it go once its inbox is empty and its turns are done.
 *
 * @module
 */
import type { Agent } from '../agent/agent.js'
import type { UserMessageInput } from '../agent/user-message-input.js'
import { ErrorCode } from '../errors/codes.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionLockedError } from '../errors/session-locked-error.js'
import type { Harness, ResumeOverrides } from '../harness/harness.js'
import type { PostgresStarted } from './postgres-handle.js'
import type { InboxRow, WorkerQueries } from './worker-queries.js'

/** What a {@link SessionDriver} needs from its worker. @internal */
export interface SessionDriverHost {
  readonly harness: Harness
  readonly queries: WorkerQueries
  readonly started: PostgresStarted
  readonly workerId: string
  readonly pollMs: number
  /** The overrides to open the session's agent with (`queued: 'keep'` is forced). */
  readonly overrides: (sessionId: string) => ResumeOverrides
  /** Reports a failure that did not stop the worker. Must not throw. */
  readonly report: (error: unknown, sessionId: string) => void
  /** Counts a message handed to an agent. */
  readonly delivered: () => void
}

/** How a drive ended. @internal */
export type DriveOutcome = 'done' | 'locked' | 'lost' | 'stopped' | 'failed'

/**
 * Drives one claimed session until it has no work left, its lease is lost, or the worker stops.
 *
 * @internal
 */
export class SessionDriver {
  readonly sessionId: string
  readonly #host: SessionDriverHost
  /** Inbox ids handed to the agent: a message stays unconsumed in the table until its batch commits. */
  readonly #fed = new Set<string>()
  #wakeup: (() => void) | undefined
  #stopDeadline: number | undefined
  #lost = false

  /**
   * @param sessionId - the claimed session
   * @param host - the worker
   */
  constructor(sessionId: string, host: SessionDriverHost) {
    this.sessionId = sessionId
    this.#host = host
  }

  /** Something changed for this session (a notification): look at its inbox now. */
  notify(): void {
    this.#wakeup?.()
  }

  /**
   * Stops taking messages; running and queued turns may finish until `deadline` (epoch ms), then
   * the agent is disposed and its lease released.
   *
   * @param deadline - `Date.now()`-based time limit
   */
  stop(deadline: number): void {
    this.#stopDeadline = Math.min(this.#stopDeadline ?? Number.POSITIVE_INFINITY, deadline)
    this.#wakeup?.()
  }

  /**
   * Opens the agent and drives it. Never rejects.
   *
   * @returns how it ended
   */
  async run(): Promise<DriveOutcome> {
    const { queries, workerId } = this.#host
    const agent = await this.#open()
    if (typeof agent === 'string') return agent
    // Prompts an earlier owner logged as queued and no turn claimed run first, oldest first.
    agent.wake()
    const watch = this.#watchLease(agent)
    let outcome: DriveOutcome = 'failed'
    try {
      outcome = await this.#drive(agent)
    } catch (error) {
      // A statement failing because the database went away is the lost lease's, not a failure of its own.
      if (this.#lost) outcome = 'lost'
      else this.#host.report(error, this.sessionId)
    } finally {
      clearInterval(watch)
      await this.#dispose(agent)
    }
    if (outcome === 'stopped' || outcome === 'lost') {
      // Work may be left: another worker may take it at once. A failed session keeps its claim
      // until it expires, so no worker retries it in a tight loop.
      await queries.unclaim(this.sessionId, workerId).catch(() => undefined)
    }
    return outcome
  }

  async #open(): Promise<Agent | DriveOutcome> {
    const { harness, queries } = this.#host
    const overrides: ResumeOverrides = { ...this.#host.overrides(this.sessionId), queued: 'keep' }
    try {
      const { rows } = await queries.unconsumed(this.sessionId)
      const create = rows.some((row) => row.create)
      return create
        ? await harness.openAgent(this.sessionId, overrides)
        : await harness.resumeAgent(this.sessionId, overrides)
    } catch (error) {
      // Another process drives it: not this worker's to run.
      if (SessionLockedError.is(error)) return 'locked'
      if (PersistenceError.is(error) && error.code === ErrorCode.SESSION_NOT_FOUND) {
        await this.#refuseAll('the session does not exist (it was deleted, or never created)').catch(
          (failure: unknown) => this.#host.report(failure, this.sessionId),
        )
        return 'done'
      }
      this.#host.report(error, this.sessionId)
      return 'failed'
    }
  }

  /** Marks every waiting message of a session that cannot run as failed, and drops the session's job. */
  async #refuseAll(reason: string): Promise<void> {
    const { queries } = this.#host
    const { wake, rows } = await queries.unconsumed(this.sessionId)
    if (rows.length > 0)
      await queries.fail(
        this.sessionId,
        rows.map((row) => row.id),
        reason,
      )
    await queries.finish(this.sessionId, wake)
  }

  /** The loop: read, feed, finish when idle and empty; wait for a change. */
  async #drive(agent: Agent): Promise<DriveOutcome> {
    const { queries, harness } = this.#host
    for (;;) {
      if (this.#lost) return 'lost'
      const stopping = this.#stopDeadline !== undefined
      if (stopping) {
        // Draining: no new messages; turns already queued may finish until the deadline.
        if (agent.status === 'idle' && !agent.inbox.hasPending) return 'stopped'
        await this.#wait(agent, Math.max(0, (this.#stopDeadline as number) - Date.now()))
        if (Date.now() >= (this.#stopDeadline as number)) return 'stopped'
        continue
      }
      try {
        const { wake, rows } = await queries.unconsumed(this.sessionId)
        if (this.#lost) return 'lost'
        const fed = this.#feed(agent, rows)
        if (fed === 0 && agent.status === 'idle' && !agent.inbox.hasPending) {
          // The consumption marks commit with the events that log the messages: flushed, the
          // table shows them consumed, and the job can go.
          await harness.sessions.flush(agent.session)
          if (await queries.finish(this.sessionId, wake)) return 'done'
        }
      } catch (error) {
        // A database blip must not end a running turn: the lease watch decides when to let go.
        if (this.#lost) return 'lost'
        this.#host.report(error, this.sessionId)
      }
      await this.#wait(agent, this.#host.pollMs)
    }
  }

  /**
   * Hands the waiting messages not yet handed over to the agent, in submit order: steering for a
   * running turn when submitted with `busy: 'steer'`, else a prompt for a turn of its own.
   *
   * @returns how many were handed over
   */
  #feed(agent: Agent, rows: readonly InboxRow[]): number {
    let fed = 0
    const failed: string[] = []
    for (const row of rows) {
      if (this.#fed.has(row.id)) continue
      this.#fed.add(row.id)
      // Logged already (by an earlier owner whose batch committed after this read began): never twice.
      if (agent.session.hasMessageId(row.id) || agent.inbox.nextTurn.some((message) => message.id === row.id)) continue
      if (agent.inbox.nextStep.some((message) => message.id === row.id)) continue
      try {
        const input = JSON.parse(row.body) as UserMessageInput
        if (row.busy === 'steer' && agent.status === 'running') agent.steer(input, { id: row.id })
        else agent.followup(input, { id: row.id })
        fed++
        this.#host.delivered()
      } catch (error) {
        failed.push(row.id)
        this.#host.report(error, this.sessionId)
      }
    }
    if (failed.length > 0) {
      void this.#host.queries
        .fail(this.sessionId, failed, 'the agent refused the message')
        .catch((error: unknown) => this.#host.report(error, this.sessionId))
    }
    return fed
  }

  /** Waits for the agent to go idle, a notification, a stop, a lost lease, or `ms`. */
  async #wait(agent: Agent, ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined
    await new Promise<void>((resolve) => {
      this.#wakeup = resolve
      timer = setTimeout(resolve, ms)
      if (agent.status === 'running') void agent.whenIdle().then(resolve)
    })
    clearTimeout(timer)
    this.#wakeup = undefined
  }

  /**
   * Watches the lease: the adapter renews it in the background and a renewal that cannot reach the
   * database fails silently, so the worker itself stops the agent once the last renewal is nearly
   * a TTL old — before another worker may take the session over — or once the lease is gone.
   */
  #watchLease(agent: Agent): ReturnType<typeof setInterval> {
    const { started } = this.#host
    const limit = started.leaseTtlMs - started.heartbeatMs / 2
    // A new session's lease may still be on its way when the watch starts: only a lease seen
    // live and then gone counts as lost.
    let seen = false
    const timer = setInterval(
      () => {
        if (this.#lost) return
        const age = started.leaseAgeMs(this.sessionId)
        if (age === undefined && !seen) return
        seen = true
        if (age !== undefined && age < limit) return
        this.#lost = true
        // Stop driving now: the running turn ends, nothing more is asked of the model. The next
        // owner repairs whatever the log holds.
        agent.cancel({ kind: 'disposed' }, { keepInbox: true })
        this.#wakeup?.()
      },
      Math.max(50, Math.min(started.heartbeatMs / 2, 1_000)),
    )
    timer.unref?.()
    return timer
  }

  /**
   * Disposes the agent, which releases its lease. Events it could not flush (the database went
   * away) stay behind in the harness, and so would the lease, renewed for them once the database
   * answers again: the session would stay locked with nobody driving it. So the adapter's lease
   * ends here in any case (a no-op after a clean release); the next owner repairs the log. With a
   * lost lease it does not wait on the database at all.
   */
  async #dispose(agent: Agent): Promise<void> {
    const disposing = agent.dispose().catch((error: unknown) => {
      if (!this.#lost) this.#host.report(error, this.sessionId)
    })
    if (!this.#lost) await disposing
    this.#host.started.dropLease(this.sessionId)
  }
}
