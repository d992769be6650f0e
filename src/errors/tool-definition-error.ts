import { causeOf } from './cause-of.js'
import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A `defineTool` declaration failed validation; nothing was defined. */
export class ToolDefinitionError extends HarnessError {
  static override readonly brand: string = 'ToolDefinitionError'
  /** The tool's name, when it was readable. */
  readonly toolName: string | undefined
  /** The offending field, e.g. `'name'`, `'input'`, or an unknown key. */
  readonly field: string
  /** The offending value. */
  readonly value: unknown

  /** @param options - the tool name, the field, its value, why, and a cause (e.g. the JSON Schema conversion error) */
  constructor(options: {
    toolName?: string | undefined
    field: string
    value?: unknown
    reason: string
    cause?: unknown
  }) {
    const subject = options.toolName === undefined ? 'tool definition' : `tool "${options.toolName}"`
    super(ErrorCode.INVALID_TOOL_DEFINITION, `${subject}: ${options.field} ${options.reason}`, causeOf(options))
    this.toolName = options.toolName
    this.field = options.field
    this.value = options.value
  }
}
