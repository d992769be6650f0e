/**
 * Every stable error code this library uses. Route on `error.code`, never on `error.message`.
 */
export const ErrorCode = {
  /** A function was called with a malformed argument. */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** An operation was attempted on a disposing or disposed context. */
  CONTEXT_DISPOSED: 'CONTEXT_DISPOSED',
  /** A service key already has a provider in the realm. */
  SERVICE_CONFLICT: 'SERVICE_CONFLICT',
  /** `ctx.get()` found no provider for a key. */
  SERVICE_MISSING: 'SERVICE_MISSING',
  /** Planning found required keys that no enabled entry provides. */
  SERVICES_MISSING: 'SERVICES_MISSING',
  /** An event name has no definition. */
  UNKNOWN_EVENT: 'UNKNOWN_EVENT',
  /** An event was dispatched with a mode other than its defined one. */
  EVENT_MODE_MISMATCH: 'EVENT_MODE_MISMATCH',
  /** An event name was defined twice with different modes or owners. */
  EVENT_CONFLICT: 'EVENT_CONFLICT',
  /** A waterfall listener called `next` more than once. */
  WATERFALL_NEXT: 'WATERFALL_NEXT',
  /** A scope link would create a cycle or is malformed. */
  SCOPE_LINK: 'SCOPE_LINK',
  /** A value passed as a plugin is not a valid plugin. */
  INVALID_PLUGIN: 'INVALID_PLUGIN',
  /** An entry's config failed its plugin's schema. */
  PLUGIN_CONFIG_INVALID: 'PLUGIN_CONFIG_INVALID',
  /** Plugin dependencies form a cycle. */
  PLUGIN_CYCLE: 'PLUGIN_CYCLE',
  /** A plugin failed to start; the start was rolled back. */
  PLUGIN_START_FAILED: 'PLUGIN_START_FAILED',
  /** The entries and patches cannot be composed. */
  COMPOSITION_INVALID: 'COMPOSITION_INVALID',
  /** A patch names an entry id that does not exist. */
  UNKNOWN_ENTRY: 'UNKNOWN_ENTRY',
  /** `createHarness()` options failed validation. */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** A configuration value failed validation. */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** zstd compression was asked for but is not available. */
  ZSTD_UNAVAILABLE: 'ZSTD_UNAVAILABLE',
  /** The harness was used after `close()`. */
  HARNESS_CLOSED: 'HARNESS_CLOSED',
  /** One or more steps of `close()` failed (every step still ran). */
  CLOSE_FAILED: 'CLOSE_FAILED',
  /** An optional peer dependency of a subpath is not installed. */
  MISSING_PEER: 'MISSING_PEER',
} as const

/** The union of every {@link ErrorCode} value. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]
