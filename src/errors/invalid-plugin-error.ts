import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A plugin definition (object or class form) is malformed. */
export class InvalidPluginError extends HarnessError {
  static override readonly brand: string = 'InvalidPluginError'
  /** The plugin's name as far as it is known (`''` when the name itself is the problem). */
  readonly plugin: string
  /** The offending field: `'name'`, `'apply'`, `'inject'`, `'provides'`, `'config'`, … */
  readonly field: string

  /** @param options - the plugin, the field and why it was refused */
  constructor(options: { plugin: string; field: string; reason: string }) {
    const who = options.plugin === '' ? 'a plugin' : `plugin "${options.plugin}"`
    super(ErrorCode.INVALID_PLUGIN, `${who} has an invalid ${options.field}: ${options.reason}`)
    this.plugin = options.plugin
    this.field = options.field
  }
}
