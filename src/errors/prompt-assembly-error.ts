import { causeOf } from './cause-of.js'
import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link PromptAssemblyError}. */
export type PromptAssemblyErrorCode =
  | typeof ErrorCode.INVALID_VARIABLE_VALUE
  | typeof ErrorCode.DUPLICATE_TOOL_SCHEMA
  | typeof ErrorCode.MULTIPLE_COMPLETE_SECTIONS
  | typeof ErrorCode.UNKNOWN_TOOL_ORDER_ENTRY
  | typeof ErrorCode.INVALID_ASSEMBLY
  | typeof ErrorCode.CONTRIBUTION_FAILED

/** The fields a {@link PromptAssemblyError} may carry. */
export interface PromptAssemblyErrorFields {
  /** `CONTRIBUTION_FAILED`: the contribution kind. */
  readonly kind?: string | undefined
  /** `INVALID_VARIABLE_VALUE`, `DUPLICATE_TOOL_SCHEMA`, `UNKNOWN_TOOL_ORDER_ENTRY`, `CONTRIBUTION_FAILED`: the name concerned. */
  readonly name?: string | undefined
  /** `INVALID_VARIABLE_VALUE`: the type of the returned value. */
  readonly valueType?: string | undefined
  /** `MULTIPLE_COMPLETE_SECTIONS`: the complete sections' names, in sorted order. */
  readonly names?: readonly string[] | undefined
  /** `UNKNOWN_TOOL_ORDER_ENTRY`: the known tool names, sorted. */
  readonly known?: readonly string[] | undefined
  /** `INVALID_ASSEMBLY`: where the listener's result is invalid, e.g. `'sections.2.order'`. */
  readonly path?: string | undefined
}

/**
 * `assemble()` failed; nothing was cached. Where a failure concerns one
 * contribution or tool, `name` holds that contribution or tool name (test the class with `is()`).
 */
export class PromptAssemblyError extends HarnessError {
  static override readonly brand: string = 'PromptAssemblyError'
  /** `CONTRIBUTION_FAILED`: the contribution kind. */
  readonly kind: string | undefined
  /** `INVALID_VARIABLE_VALUE`: the type of the returned value. */
  readonly valueType: string | undefined
  /** `MULTIPLE_COMPLETE_SECTIONS`: the complete sections' names, sorted. */
  readonly names: readonly string[] | undefined
  /** `UNKNOWN_TOOL_ORDER_ENTRY`: the known tool names, sorted. */
  readonly known: readonly string[] | undefined
  /** `INVALID_ASSEMBLY`: the path of the first problem. */
  readonly path: string | undefined

  /** @param options - the code, the message, the fields and a cause (`CONTRIBUTION_FAILED`) */
  constructor(
    options: { code: PromptAssemblyErrorCode; message: string; cause?: unknown } & PromptAssemblyErrorFields,
  ) {
    super(options.code, options.message, causeOf(options))
    if (options.name !== undefined) this.name = options.name
    this.kind = options.kind
    this.valueType = options.valueType
    this.names = options.names === undefined ? undefined : Object.freeze([...options.names])
    this.known = options.known === undefined ? undefined : Object.freeze([...options.known])
    this.path = options.path
  }
}
