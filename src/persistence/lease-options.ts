/**
 * The lease timing every adapter factory takes (`lease: { ttlMs, heartbeatMs }`), its defaults and
 * its check.
 *
 * @module
 */
import { randomHex } from './random-hex.js'

/**
 * How long a lease lives without a heartbeat, and how often its holder renews it. Every adapter
 * factory takes these as `lease`.
 *
 * A holder renews its lease every `heartbeatMs`; a lease whose last heartbeat is `ttlMs` old is
 * expired and another instance (any host, any pid) may take it over, after which the old holder
 * writes nothing more (`LeaseLostError`). A holder also refuses to write once its own last
 * heartbeat is `ttlMs` old, so a writer that was frozen past its TTL fails instead of writing.
 * Leave a few heartbeats inside one TTL: a slow disk or a busy event loop delays heartbeats.
 */
export interface LeaseOptions {
  /**
   * How long a lease lives after its last heartbeat, in milliseconds: after a crash, the time
   * until another process may take the session over. Must be greater than `heartbeatMs`.
   *
   * @defaultValue 30000
   */
  readonly ttlMs?: number
  /**
   * How often the holder renews its lease, in milliseconds.
   *
   * @defaultValue 10000
   */
  readonly heartbeatMs?: number
}

/**
 * {@link LeaseOptions} with the defaults filled in.
 *
 * @internal
 */
export interface LeaseTiming {
  readonly ttlMs: number
  readonly heartbeatMs: number
}

/** The default lease TTL: 30 s, three heartbeats. */
export const DEFAULT_LEASE_TTL_MS = 30_000
/** The default heartbeat interval: 10 s. */
export const DEFAULT_LEASE_HEARTBEAT_MS = 10_000

/** Above this a `setInterval` delay overflows (Node fires it after 1 ms). */
const MAX_TIMER_MS = 2_147_483_647

function isPositiveMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= MAX_TIMER_MS
}

/**
 * The option rule of `lease`: an issue message, or `undefined` when the value is fine.
 *
 * @param value - the `lease` option as given
 * @returns what is wrong with it
 * @internal
 */
export function leaseOptionsIssue(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'must be an object { ttlMs?, heartbeatMs? }'
  }
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (key !== 'ttlMs' && key !== 'heartbeatMs')
      return `has an unknown key "${key}" (expected { ttlMs?, heartbeatMs? })`
  }
  const { ttlMs = DEFAULT_LEASE_TTL_MS, heartbeatMs = DEFAULT_LEASE_HEARTBEAT_MS } = record
  if (!isPositiveMs(ttlMs))
    return `ttlMs must be a positive integer of milliseconds (at most ${MAX_TIMER_MS}), got ${String(ttlMs)}`
  if (!isPositiveMs(heartbeatMs)) {
    return `heartbeatMs must be a positive integer of milliseconds (at most ${MAX_TIMER_MS}), got ${String(heartbeatMs)}`
  }
  if (ttlMs <= heartbeatMs) {
    return `ttlMs (${ttlMs}) must be greater than heartbeatMs (${heartbeatMs}): a lease would expire before its holder renews it`
  }
  return undefined
}

/**
 * The lease timing of checked `lease` options, defaults filled in.
 *
 * @param options - options that passed {@link leaseOptionsIssue}
 * @returns the timing
 * @internal
 */
export function leaseTiming(options: LeaseOptions | undefined): LeaseTiming {
  return {
    ttlMs: options?.ttlMs ?? DEFAULT_LEASE_TTL_MS,
    heartbeatMs: options?.heartbeatMs ?? DEFAULT_LEASE_HEARTBEAT_MS,
  }
}

/**
 * A new lease owner id: random, never derived from a pid or a host name, so a restarted
 * container (same host name, PID 1) is a new owner. Each adapter instance draws its own, so a new
 * process start always has new ones.
 *
 * @returns 32 hex characters
 * @internal
 */
export function newLeaseOwner(): string {
  return randomHex(16)
}
