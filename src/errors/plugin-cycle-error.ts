import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** The plugins' service dependencies form a cycle, so no start order exists. */
export class PluginCycleError extends HarnessError {
  static override readonly brand: string = 'PluginCycleError'
  /** The cycle as entry ids, first id repeated at the end: `['a', 'b', 'a']`. */
  readonly cycle: readonly string[]

  /** @param options - the cycle */
  constructor(options: { cycle: readonly string[] }) {
    super(ErrorCode.PLUGIN_CYCLE, `plugin dependencies form a cycle: ${options.cycle.join(' -> ')}`)
    this.cycle = Object.freeze([...options.cycle])
  }
}
