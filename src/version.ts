/**
 * The package version, kept equal to `package.json` (a test checks it). Adapters send it in their
 * `user-agent` header (`yoke/<version>`).
 *
 * @module
 */

/** The version of this Yoke package, as in its `package.json`. */
export const YOKE_VERSION = '0.1.0'
