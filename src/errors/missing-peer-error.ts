import { ErrorCode } from './codes.js'
import { causeOf } from './cause-of.js'
import { HarnessError } from './harness-error.js'

/** An optional peer dependency that a subpath needs is not installed. */
export class MissingPeerError extends HarnessError {
  static override readonly brand: string = 'MissingPeerError'
  /** The npm package that is missing, e.g. `'better-sqlite3'`. */
  readonly peer: string
  /** The Yoke subpath that needs it, e.g. `'yoke/sqlite'`. */
  readonly subpath: string
  /** The command that installs it, e.g. `'npm install better-sqlite3@12'`. */
  readonly install: string

  /** @param options - the peer, the subpath, the install command and the import error */
  constructor(options: { peer: string; subpath: string; install: string; cause?: unknown }) {
    super(
      ErrorCode.MISSING_PEER,
      `${options.subpath} needs the optional peer "${options.peer}"; install it with: ${options.install}`,
      causeOf(options),
    )
    this.peer = options.peer
    this.subpath = options.subpath
    this.install = options.install
  }
}
