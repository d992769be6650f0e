import type { ToolCallInfo } from './tool-call-info.js'

/** A host's or listener's answer to an approval request. */
export type ApprovalDecision =
  | {
      /** Run the call. */
      readonly kind: 'allow'
    }
  | {
      /** Refuse the call (`TOOL_DENIED`). */
      readonly kind: 'deny'
      /** Why, shown to the model after `"<name>" was not approved: `. */
      readonly reason?: string
    }

/** One pending approval, as `agent.pendingApprovals` lists it. */
export interface PendingApproval {
  /** The approval id (from the harness id source). */
  readonly approvalId: string
  /** The call waiting for it. */
  readonly callId: string
  /** The tool's name. */
  readonly toolName: string
  /** The model's raw argument text. */
  readonly arguments: string
  /** Why approval was asked (from `tools/pre-execute`'s `ask`). */
  readonly reason?: string
}

/** How an approval ended, as logged in `approval/decided`. */
export type ApprovalOutcome =
  | {
      /** The call may run. */
      readonly outcome: 'allowed'
      /** Who decided. */
      readonly by: 'listener' | 'host'
    }
  | {
      /** The call is refused. */
      readonly outcome: 'denied'
      /** Who (or what) decided. */
      readonly by: 'listener' | 'host' | 'default' | 'timeout' | 'error'
      /** Why, as the model will read it. */
      readonly reason: string
    }
  | {
      /** The turn was cancelled while the approval was pending. */
      readonly outcome: 'cancelled'
      /** Always `'cancel'`. */
      readonly by: 'cancel'
    }

/** What {@link ApprovalBroker.ask} needs besides the call. */
export interface ApprovalAskOptions {
  /** Why approval is asked. */
  readonly reason?: string
  /** `'auto'` denies an unanswered request; `'manual'` waits for `approve()`. */
  readonly mode: 'auto' | 'manual'
  /** `'manual'` only: deny after this many milliseconds (harness clock). */
  readonly timeoutMs?: number
}

/**
 * One agent's approvals: durable `approval/asked` / `approval/decided` events,
 * the `approval/request` waterfall, host decisions. Exactly one decision per request; the first
 * wins and is final.
 */
export interface ApprovalBroker {
  /** The approvals waiting for a decision, in ask order. */
  readonly pending: readonly PendingApproval[]
  /**
   * Decides a pending approval (`by: 'host'`).
   *
   * @param approvalId - the id from `pending`
   * @param decision - allow or deny
   * @returns `'decided'`, or `'already-decided'` (nothing logged) for a decided id
   * @throws {@link ApprovalNotPendingError} for an id never asked (or voided by a crash); {@link InvalidArgumentError} `argument: 'decision'`
   */
  approve(approvalId: string, decision: ApprovalDecision): 'decided' | 'already-decided'
  /**
   * Asks for approval of one call: appends `approval/asked`, dispatches `approval/request`,
   * waits per `mode`, appends `approval/decided`. The call's `signal` cancels it (`cancelled`).
   *
   * @param call - the call (its session, turn and step are where the events go)
   * @param options - reason, mode and timeout
   * @returns how it ended; never rejects for a listener failure (that denies, `by: 'error'`)
   */
  ask(call: ToolCallInfo, options: ApprovalAskOptions): Promise<ApprovalOutcome>
}
