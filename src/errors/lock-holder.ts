/** Who holds a session lease (02/03: a lock file's or row's holder). */
export interface LockHolder {
  /** The holder's process id. */
  readonly pid: number
  /** The holder's host name. */
  readonly host: string
  /** When it acquired the lease (epoch ms). */
  readonly acquiredAt: number
}
