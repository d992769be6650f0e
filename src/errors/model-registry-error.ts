import { causeOf } from './cause-of.js'
import type { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The codes of {@link ModelRegistryError}. */
export type ModelRegistryErrorCode =
  | typeof ErrorCode.INVALID_PROVIDER
  | typeof ErrorCode.INVALID_ADAPTER
  | typeof ErrorCode.DUPLICATE_PROVIDER
  | typeof ErrorCode.PREPARED_CALL_REUSED
  | typeof ErrorCode.PREPARED_CALL_MISMATCH

/** The options of a {@link ModelRegistryError}. */
export interface ModelRegistryErrorOptions {
  /** The stable code. */
  readonly code: ModelRegistryErrorCode
  /** What went wrong, naming the offending value. */
  readonly message: string
  /** The provider id concerned, when there is one. */
  readonly provider?: string | undefined
  /** The offending value (an adapter, a provider id, a request's model). */
  readonly value?: unknown
  /** The underlying error, if any. */
  readonly cause?: unknown
}

/** A model registry operation was refused; nothing was registered or streamed. */
export class ModelRegistryError extends HarnessError {
  static override readonly brand: string = 'ModelRegistryError'
  /** The provider id concerned, when there is one. */
  readonly provider: string | undefined
  /** The offending value. */
  readonly value: unknown

  /** @param options - the code, the message, the provider, the value and a cause */
  constructor(options: ModelRegistryErrorOptions) {
    super(options.code, options.message, causeOf(options))
    this.provider = options.provider
    this.value = options.value
  }
}
