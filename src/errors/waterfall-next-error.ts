import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** A waterfall listener called its `next` twice, or after it had settled. */
export class WaterfallNextError extends HarnessError {
  static override readonly brand: string = 'WaterfallNextError'
  /** The waterfall event name. */
  readonly event: string
  /** What went wrong. */
  readonly reason: 'called-twice' | 'after-settle'

  /** @param options - the event and the reason */
  constructor(options: { event: string; reason: 'called-twice' | 'after-settle' }) {
    const what = options.reason === 'called-twice' ? 'called twice' : 'called after its listener settled'
    super(ErrorCode.WATERFALL_NEXT, `next() of a "${options.event}" listener was ${what}`)
    this.event = options.event
    this.reason = options.reason
  }
}
