import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'
import { fieldPath, type ValidationIssue } from './issue.js'

/** An entry's config failed its plugin's config schema. Reported as the `cause` of a start failure. */
export class PluginConfigError extends HarnessError {
  static override readonly brand: string = 'PluginConfigError'
  /** The entry id whose config was refused. */
  readonly plugin: string
  /** Every schema issue. */
  readonly issues: readonly ValidationIssue[]

  /** @param options - the entry id and the issues */
  constructor(options: { plugin: string; issues: readonly ValidationIssue[] }) {
    const first = options.issues[0]
    const where = first === undefined ? '' : `: ${fieldPath(first.path) || '(root)'}: ${first.message}`
    super(ErrorCode.PLUGIN_CONFIG_INVALID, `config of plugin "${options.plugin}" is invalid${where}`)
    this.plugin = options.plugin
    this.issues = Object.freeze([...options.issues])
  }
}
