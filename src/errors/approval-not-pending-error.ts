import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** `approve()` named an approval that was never asked, or was voided by a crash. */
export class ApprovalNotPendingError extends HarnessError {
  static override readonly brand: string = 'ApprovalNotPendingError'
  /** The id given. */
  readonly approvalId: string

  /** @param options - the approval id */
  constructor(options: { approvalId: string }) {
    super(ErrorCode.APPROVAL_NOT_PENDING, `approval "${options.approvalId}" is not pending`)
    this.approvalId = options.approvalId
  }
}
