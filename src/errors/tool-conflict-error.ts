import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/**
 * A tool name is already registered in the target layer, or appears twice in one batch;
 * nothing was registered.
 */
export class ToolConflictError extends HarnessError {
  static override readonly brand: string = 'ToolConflictError'
  /** The conflicting name. */
  readonly toolName: string
  /** The layer: a scope key, or `undefined` for the global layer. */
  readonly scope: object | undefined

  /** @param options - the name, the layer, and whether the clash is inside one batch */
  constructor(options: { toolName: string; scope: object | undefined; inBatch?: boolean }) {
    const where = options.scope === undefined ? 'the global layer' : 'this scope'
    const detail =
      options.inBatch === true ? `appears twice in one registration batch` : `is already registered in ${where}`
    const hint =
      options.scope === undefined && options.inBatch !== true
        ? '; to give one agent its own version, register it through agent.ctx.tools'
        : ''
    super(ErrorCode.TOOL_CONFLICT, `tool "${options.toolName}" ${detail}${hint}`)
    this.toolName = options.toolName
    this.scope = options.scope
  }
}
