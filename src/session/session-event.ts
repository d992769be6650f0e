import type { JsonValue } from './json-value.js'

/**
 * Where a message event goes on the surface: pushed at the end, or replacing the run of nodes from
 * `start` to `end` (inclusive, in surface order).
 */
export type SurfaceOp = 'append' | SurfaceReplace

/** The replace form of {@link SurfaceOp}. */
export interface SurfaceReplace {
  /** Always `'replace'`. */
  readonly op: 'replace'
  /** The seq of the first shadowed node. */
  readonly start: number
  /** The seq of the last shadowed node. */
  readonly end: number
}

/**
 * One committed session event: the envelope, deep-frozen. Keys appear in exactly this order; the
 * optional ones only when set.
 */
export interface SessionEvent<T extends string = string, D = JsonValue> {
  /** The `noun/verb` type, e.g. `'turn/start'`. */
  readonly type: T
  /** The index in the log: `events[i].seq === i`. */
  readonly seq: number
  /** Epoch milliseconds from the harness clock at commit (a safe integer). */
  readonly time: number
  /** The payload: a detached, deep-frozen lossless-JSON copy. */
  readonly data: D
  /** Set (only ever to `true`) when a reader without this type may keep the event uninterpreted. */
  readonly ignorable?: true
  /** Only on `user/message`, `assistant/message` and `tool/result`: its surface placement. */
  readonly surfaceOp?: SurfaceOp
  /** Provenance: earlier seqs this event was made from. */
  readonly sourceEventSeqs?: readonly number[]
}

/** The options of `session.append`. */
export interface AppendOptions {
  /** The surface placement; required on the three message types, forbidden on every other. */
  readonly surfaceOp?: SurfaceOp
  /** Earlier seqs this event was made from (message types only). */
  readonly sourceEventSeqs?: readonly number[]
  /** Marks an event of a type this catalog may not know; never on core types. */
  readonly ignorable?: true
}
