/** What the runner asks a child to measure, and what the child sends back. */
import type { RuntimeName } from './cases/index.js'

/** The stream cases of the streaming figure. */
export type StreamCase = 'stream-floor' | 'stream-ai-sdk' | 'stream-yoke'

/** One measurement, run in a fresh child process. */
export type Job =
  | {
      readonly kind: 'turns'
      readonly runtime: RuntimeName
      /** `fresh`: a new conversation per turn; `long`: one conversation of `turns` turns. */
      readonly mode: 'fresh' | 'long'
      readonly turns: number
      /** Warm-up turns before the measured ones (fresh: one-turn conversations; long: one conversation). */
      readonly warmup: number
    }
  | { readonly kind: 'fsync'; readonly count: number }
  | {
      readonly kind: 'stream'
      readonly case: StreamCase
      readonly url: string
      readonly deltas: number
      readonly turns: number
      readonly warmup: number
    }
  | { readonly kind: 'load'; readonly events: number; readonly rounds: number }
  | {
      readonly kind: 'cycles'
      readonly cycles: number
      /** `false` runs Yoke with `persistence: false` (no store); `memory` with the memory store. */
      readonly persistence: 'memory' | 'false'
    }
  | { readonly kind: 'idle'; readonly events: number }

/** Per-step figures of a turn job. */
export interface TurnsResult {
  readonly kind: 'turns'
  readonly cpuPerStep: number
  readonly wallPerStep: number
  /** Medians of the first and last 10% of turns, per step (long mode; the whole run in fresh mode). */
  readonly firstWall: number
  readonly lastWall: number
  readonly firstCpu: number
  readonly lastCpu: number
  /** `fsync` + `fdatasync` calls per step over the measured turns. */
  readonly syncsPerStep: number
  /** The same without the conversation's first turn (long mode: a continuing session). */
  readonly continuingSyncsPerStep: number
  /** Set when the runtime could not be created (an option that does not exist yet). */
  readonly unavailable?: string
}

export interface FsyncResult {
  readonly kind: 'fsync'
  /** µs of one 300-byte write + `fdatasync`, median. */
  readonly wallPerSync: number
}

export interface StreamResult {
  readonly kind: 'stream'
  readonly cpuPerDelta: number
  readonly wallPerDelta: number
}

export interface LoadResult {
  readonly kind: 'load'
  /** ms of the best round: `persistence.load` and the raw read + split + parse floor. */
  readonly loadMs: number
  readonly floorMs: number
  readonly megabytes: number
}

export interface CyclesResult {
  readonly kind: 'cycles'
  readonly persistence: 'memory' | 'false'
  /** After a gc: heap used and listener / resource counts, at 30% of the cycles and at the end. */
  readonly heapEarly: number
  readonly heapEnd: number
  readonly listenersEarly: number
  readonly listenersEnd: number
  readonly resourcesEarly: number
  readonly resourcesEnd: number
  readonly cycles: number
}

export interface IdleResult {
  readonly kind: 'idle'
  readonly events: number
  readonly jsonBytes: number
  /** Heap the opened, idle agent holds (after a gc), bytes. */
  readonly heldBytes: number
  /** For scale: heap that `JSON.parse` of each line of the same log file holds, bytes. */
  readonly parsedBytes: number
}

export type JobResult = (TurnsResult | FsyncResult | StreamResult | LoadResult | CyclesResult | IdleResult) & {
  /** Peak resident set of the child, bytes. */
  readonly peakRss: number
}
