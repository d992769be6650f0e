import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** One error met while rolling back after a failed start. */
export interface RollbackError {
  /** The effect label (or entry id) whose teardown failed. */
  readonly label: string
  /** What it threw. */
  readonly error: unknown
}

/** A plugin failed to start; everything started before it was rolled back. */
export class PluginStartError extends HarnessError {
  static override readonly brand: string = 'PluginStartError'
  /** The entry (or runtime plugin) id that failed. */
  readonly plugin: string
  /** The plugin's name. */
  readonly pluginName: string
  /** Errors met during the rollback, in teardown order. */
  readonly rollbackErrors: readonly RollbackError[]
  /** The harness inspection taken when the plugin failed, before the rollback. */
  readonly inspection: unknown

  /** @param options - the failing plugin, the cause, the rollback errors and the inspection */
  constructor(options: {
    plugin: string
    pluginName: string
    cause: unknown
    rollbackErrors: readonly RollbackError[]
    inspection: unknown
  }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause)
    super(ErrorCode.PLUGIN_START_FAILED, `plugin "${options.plugin}" failed to start: ${reason}`, {
      cause: options.cause,
    })
    this.plugin = options.plugin
    this.pluginName = options.pluginName
    this.rollbackErrors = Object.freeze([...options.rollbackErrors])
    this.inspection = options.inspection
  }
}
