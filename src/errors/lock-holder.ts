/** Who holds (or held) a session lease: a lock file's or a lease row's holder. */
export interface LockHolder {
  /** The holder's process id (informational only: a pid never decides whether a lease is live). */
  readonly pid: number
  /** The holder's host name (informational only). */
  readonly host: string
  /** When it acquired the lease (epoch ms). */
  readonly acquiredAt: number
  /** The holder's owner id: random per adapter instance, so per process start. Absent in locks of older versions. */
  readonly owner?: string
  /** The lease's fencing epoch. Absent in locks of older versions. */
  readonly epoch?: number
  /** The holder's last heartbeat (epoch ms, the holder's clock). Absent in locks of older versions. */
  readonly heartbeatAt?: number
  /** The TTL the holder renews within (ms). Absent in locks of older versions. */
  readonly ttlMs?: number
}
