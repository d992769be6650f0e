import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A registration or an async dispatch went through a context whose disposal has begun. */
export class ContextDisposedError extends HarnessError {
  static override readonly brand: string = 'ContextDisposedError'
  /** The path of the disposed context, e.g. `'harness/agent-loop'`. */
  readonly context: string
  /** The operation that was refused: `'effect'`, `'provide'`, `'on'`, `'child'`, `'serial'`, … */
  readonly operation: string

  /** @param options - the context path and the refused operation */
  constructor(options: { context: string; operation: string }) {
    super(ErrorCode.CONTEXT_DISPOSED, `context "${options.context}" is disposed (operation: ${options.operation})`)
    this.context = options.context
    this.operation = options.operation
  }
}
