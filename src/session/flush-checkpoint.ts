/**
 * Which durability checkpoint of an agent's turn asks for a flush. Persistence reads it to decide
 * whether the flush must sync (see `durability` on `createHarness`); a flush that names none
 * (an explicit `sessions.flush`, dispose, close) always ends with everything durable.
 *
 * - `'before-request'`: before a model request is sent.
 * - `'before-tool'`: before a tool body runs.
 * - `'between-steps'`: after a step, before the next one is derived; the next step's
 *   `'before-request'` follows with only that step's opening events between them, so the two
 *   share one sync.
 * - `'turn-end'`: after `turn/end`.
 */
export type FlushCheckpoint = 'before-request' | 'before-tool' | 'between-steps' | 'turn-end'

/** Options of `sessions.flush`. */
export interface FlushOptions {
  /** The turn checkpoint asking, if any; absent for a flush that must be durable now. */
  readonly checkpoint?: FlushCheckpoint
}
