import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** `ctx.get(key)` found no provider of the key in the caller's realm. */
export class ServiceMissingError extends HarnessError {
  static override readonly brand: string = 'ServiceMissingError'
  /** The key name that is not provided. */
  readonly key: string
  /** The path of the context that asked. */
  readonly requestedBy: string
  /** The owner (plugin entry id, or `'harness'`) of the context that asked. */
  readonly owner: string

  /** @param options - the key, the requesting context path and its owner */
  constructor(options: { key: string; requestedBy: string; owner: string }) {
    super(ErrorCode.SERVICE_MISSING, `service "${options.key}" is not provided (requested by "${options.requestedBy}")`)
    this.key = options.key
    this.requestedBy = options.requestedBy
    this.owner = options.owner
  }
}
