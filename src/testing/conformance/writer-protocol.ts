/**
 * The writer protocol between the conformance suite and a child process running
 * `serveConformanceWriter`: one command as a JSON line on the child's stdin, replies as JSON lines
 * on its stdout.
 *
 * @module
 */
import { createHash } from 'node:crypto'

/** The lease timing every command carries: the child's adapter is made with it. */
interface CommandBase {
  /** The session to write. */
  readonly sessionId: string
  /** The child's lease TTL (ms). */
  readonly ttlMs: number
  /** The child's heartbeat interval (ms). */
  readonly heartbeatMs: number
}

/**
 * What the suite asks of a writer child (exactly one command per child):
 * - `hold`: create the session, take its lease, append the base log, reply `held`, then append one
 *   event every `everyMs`, replying `acked` after each, until an append fails (reply `error`, exit);
 * - `append`: create the session and append seeded batches back to back, replying `acked` after
 *   each, until killed;
 * - `turns`: run a harness over the adapter with a scripted model and a `windowMs` write-behind
 *   window, one turn after another, replying `acked` after each append it makes, until killed;
 * - `resume`: open the stored session with a harness (taking over the lease, repairing what a
 *   crash left), reply `resumed`, close and exit.
 *
 * @internal
 */
export type WriterCommand =
  | (CommandBase & { readonly op: 'hold'; readonly everyMs: number })
  | (CommandBase & { readonly op: 'append'; readonly seed: number })
  | (CommandBase & { readonly op: 'turns'; readonly seed: number; readonly windowMs: number })
  | (CommandBase & { readonly op: 'resume' })

/**
 * What a writer child replies, one JSON line each.
 *
 * @internal
 */
export type WriterReply =
  | { readonly reply: 'held'; readonly owner: string; readonly epoch: number }
  /** The append of seqs `first…last` resolved; `digest` is {@link digestOfTexts} of their JSON texts. */
  | { readonly reply: 'acked'; readonly first: number; readonly last: number; readonly digest: string }
  | { readonly reply: 'resumed' }
  | {
      readonly reply: 'error'
      readonly name: string
      readonly code: string | undefined
      readonly message: string
      /** The holder the error names (`LeaseLostError`, `SessionLockedError`), if any. */
      readonly holderOwner: string | undefined
      /** The holder the lease's aborted signal names, if any. */
      readonly signalHolderOwner: string | undefined
    }

/**
 * The digest both sides compute over the JSON texts of acknowledged events.
 *
 * @param texts - the events' JSON texts in seq order
 * @returns a hex SHA-256
 * @internal
 */
export function digestOfTexts(texts: readonly string[]): string {
  const hash = createHash('sha256')
  for (const text of texts) hash.update(`${text}\n`)
  return hash.digest('hex')
}
