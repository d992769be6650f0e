import { causeOf } from './cause-of.js'
import { ErrorCode } from './codes.js'
import { HarnessError } from './harness-error.js'

/** No preset of this harness has the name; nothing was created. */
export class UnknownPresetError extends HarnessError {
  static override readonly brand: string = 'UnknownPresetError'
  /** The name asked for. */
  readonly preset: string
  /** The harness's preset names, sorted. */
  readonly known: readonly string[]

  /** @param options - the name and the known names */
  constructor(options: { preset: string; known: readonly string[] }) {
    const known = [...options.known].sort()
    super(
      ErrorCode.UNKNOWN_PRESET,
      `no preset named "${options.preset}" (known: ${known.length === 0 ? 'none' : known.join(', ')})`,
    )
    this.preset = options.preset
    this.known = Object.freeze(known)
  }
}

/** A resume asked for another preset than the session recorded. */
export class PresetMismatchError extends HarnessError {
  static override readonly brand: string = 'PresetMismatchError'
  /** The preset in the session header (`undefined` when none was recorded). */
  readonly recorded: string | undefined
  /** The preset asked for. */
  readonly requested: string

  /** @param options - the recorded and requested names */
  constructor(options: { recorded: string | undefined; requested: string }) {
    super(
      ErrorCode.PRESET_MISMATCH,
      `the session was created with ${options.recorded === undefined ? 'no preset' : `preset "${options.recorded}"`}, not "${options.requested}"`,
    )
    this.recorded = options.recorded
    this.requested = options.requested
  }
}

/** A preset's plugins or `setup` failed while the harness started; everything was rolled back. */
export class PresetSetupError extends HarnessError {
  static override readonly brand: string = 'PresetSetupError'
  /** The preset's name. */
  readonly preset: string

  /** @param options - the preset and the failure */
  constructor(options: { preset: string; cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause)
    super(ErrorCode.PRESET_SETUP_FAILED, `preset "${options.preset}" failed to set up: ${reason}`, causeOf(options))
    this.preset = options.preset
  }
}
