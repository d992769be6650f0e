import type { SessionEvent } from './session-event.js'

/** A commit guard: throws (or returns a thenable) to veto the candidate. */
export type CommitGuard = (event: SessionEvent, session: import('./session.js').Session) => void

/** @internal A registered guard. */
export interface GuardRecord {
  readonly label: string
  readonly guard: CommitGuard
}

/** @internal What a registered session needs from its registry. */
export interface SessionHooks {
  /** The guards, in registration order (a snapshot per append). */
  guards(): readonly GuardRecord[]
  /** Dispatches `session/event`; contained. */
  observe(event: SessionEvent): void
}
