/**
 * Loading an optional peer dependency (better-sqlite3, pg) the moment a subpath's factory runs, so
 * a missing one is a `MissingPeerError` naming the package and its install command, raised before
 * anything is opened, instead of a module-resolution crash when `yoke/sqlite` is imported.
 *
 * @module
 */
import { createRequire } from 'node:module'
import { MissingPeerError } from '../errors/missing-peer-error.js'

/** An optional peer: its package name, the subpath that needs it and how to install it. */
export interface PeerSpec {
  /** The npm package, e.g. `'better-sqlite3'`. */
  readonly peer: string
  /** The Yoke subpath that needs it, e.g. `'yoke/sqlite'`. */
  readonly subpath: string
  /** The install command, e.g. `'npm install better-sqlite3@12'`. */
  readonly install: string
  /** The module to require when it is not the package root, e.g. `'@modelcontextprotocol/sdk/client/index.js'`. */
  readonly entry?: string
}

/**
 * Requires an optional peer synchronously. Both peers Yoke loads this way are CommonJS packages,
 * so `require` works from the ESM and the CJS build alike, and resolution starts at Yoke's own
 * location (where npm puts peers), not at the working directory.
 *
 * @param spec - the peer
 * @returns the module's exports
 * @throws `MissingPeerError` when the package cannot be found; any other load failure (a native
 *   module built for another Node) as a `MissingPeerError` too, with the original as its cause
 */
export function loadPeer(spec: PeerSpec): unknown {
  const require = createRequire(import.meta.url)
  try {
    return require(spec.entry ?? spec.peer) as unknown
  } catch (error) {
    throw new MissingPeerError({ peer: spec.peer, subpath: spec.subpath, install: spec.install, cause: error })
  }
}
