import { z } from 'zod'
import type { Agent } from '../agent/agent.js'
import type { CompactionError } from '../errors/compaction-error.js'
import { defineEvents, type Emit, type EventCatalog } from '../kernel/event-catalog.js'
import {
  nonEmptyStringSchema,
  nonNegativeSafeIntegerSchema,
  positiveSafeIntegerSchema,
  typedSchema,
} from '../session/schema-primitives.js'
import type { EventTypeOptions } from '../session/session-catalog.js'
import { type TokenUsage, tokenUsageSchema } from '../session/stream-chunk.js'
import type { AutomaticTrigger, CompactionTrigger } from './compaction-actions.js'

/** `compaction/start`: a summary action opened its bracket. */
export interface CompactionStartData {
  /** The bracket's id. */
  readonly compactionId: string
  /** What started it. */
  readonly trigger: CompactionTrigger
  /** The open turn, `null` when none. */
  readonly turn: number | null
  /** The open step, `null` when none. */
  readonly step: number | null
}

/** `compaction/summary`: the summary, immediately followed by its replacing `user/message`. */
export interface CompactionSummaryData {
  /** The bracket's id. */
  readonly compactionId: string
  /** The summary text. */
  readonly summary: string
  /** The replaced span's first and last node seqs. */
  readonly shadowedRange: {
    /** The first node. */
    readonly start: number
    /** The last node. */
    readonly end: number
  }
  /** Every replaced node, in surface order. */
  readonly shadowedSeqs: readonly number[]
  /** The per-message estimate of the replaced nodes. */
  readonly shadowedTokens: number
  /** The per-message estimate of the checkpoint. */
  readonly summaryTokens: number
  /** The provider that wrote the summary. */
  readonly provider: string
  /** The model that wrote the summary. */
  readonly model: string
  /** The summary call's usage. */
  readonly usage?: TokenUsage
  /** How many model calls it took. */
  readonly attempts: number
}

/** `compaction/end`: the bracket closed, with the error when the action failed. */
export interface CompactionEndData {
  /** The bracket's id. */
  readonly compactionId: string
  /** The failure's code and message. */
  readonly error?: {
    /** The `CompactionError` code. */
    readonly code: string
    /** Its message. */
    readonly message: string
  }
}

/** `compaction/prune`: the next event rewrites one tool result to a placeholder. */
export interface CompactionPruneData {
  /** What ran the pruner. */
  readonly trigger: CompactionTrigger
  /** The rewritten `tool/result` node. */
  readonly targetSeq: number
  /** The inner text's length in code points. */
  readonly originalChars: number
  /** How many code points were kept. */
  readonly keptChars: number
}

const triggerSchema = z.enum(['pressure', 'context-overflow', 'manual', 'range'])
const nullableNumber = positiveSafeIntegerSchema.nullable()

/** The strict schema of `compaction/start`. */
export const compactionStartSchema: z.ZodType<CompactionStartData> = typedSchema<CompactionStartData>()(
  z.strictObject({
    compactionId: nonEmptyStringSchema,
    trigger: triggerSchema,
    turn: nullableNumber,
    step: nullableNumber,
  }),
)

/** The strict schema of `compaction/summary`. */
export const compactionSummarySchema: z.ZodType<CompactionSummaryData> = typedSchema<CompactionSummaryData>()(
  z.strictObject({
    compactionId: nonEmptyStringSchema,
    summary: nonEmptyStringSchema,
    shadowedRange: z.strictObject({ start: nonNegativeSafeIntegerSchema, end: nonNegativeSafeIntegerSchema }),
    shadowedSeqs: z.array(nonNegativeSafeIntegerSchema).min(1),
    shadowedTokens: nonNegativeSafeIntegerSchema,
    summaryTokens: nonNegativeSafeIntegerSchema,
    provider: nonEmptyStringSchema,
    model: nonEmptyStringSchema,
    usage: tokenUsageSchema.exactOptional(),
    attempts: positiveSafeIntegerSchema,
  }),
)

/** The strict schema of `compaction/end`. */
export const compactionEndSchema: z.ZodType<CompactionEndData> = typedSchema<CompactionEndData>()(
  z.strictObject({
    compactionId: nonEmptyStringSchema,
    error: z.strictObject({ code: nonEmptyStringSchema, message: z.string() }).exactOptional(),
  }),
)

/** The strict schema of `compaction/prune`. */
export const compactionPruneSchema: z.ZodType<CompactionPruneData> = typedSchema<CompactionPruneData>()(
  z.strictObject({
    trigger: triggerSchema,
    targetSeq: nonNegativeSafeIntegerSchema,
    originalChars: nonNegativeSafeIntegerSchema,
    keptChars: nonNegativeSafeIntegerSchema,
  }),
)

/** The durable types the compaction plugin registers. */
export const compactionEventTypes: Readonly<
  Record<'compaction/start' | 'compaction/summary' | 'compaction/end' | 'compaction/prune', EventTypeOptions>
> = Object.freeze({
  'compaction/start': Object.freeze({ schema: compactionStartSchema, enclosure: 'none' }),
  'compaction/summary': Object.freeze({ schema: compactionSummarySchema, enclosure: 'none' }),
  'compaction/end': Object.freeze({ schema: compactionEndSchema, enclosure: 'none' }),
  'compaction/prune': Object.freeze({ schema: compactionPruneSchema, enclosure: 'turn' }),
})

/** Why a trigger did nothing (`agent/compaction`, outcome `skipped`). */
export type CompactionSkipReason = 'no-context-window' | 'nothing-to-compact' | 'busy' | 'aborted'

/** `agent/compaction` (emit, `{ scope: agent }`): a trigger skipped, failed or stayed over the limit. */
export interface AgentCompactionPayload {
  /** The agent. */
  readonly agent: Agent
  /** The trigger. */
  readonly trigger: AutomaticTrigger
  /** What happened. */
  readonly outcome: 'skipped' | 'failed' | 'unrelieved'
  /** For `skipped`: why. */
  readonly reason?: CompactionSkipReason
  /** For `failed`: the action's error. */
  readonly error?: CompactionError
}

/** The live events of compaction. */
export type CompactionEvents = {
  /** A trigger skipped, an action failed, or pressure stayed over the limit. */
  readonly 'agent/compaction': Emit<AgentCompactionPayload>
}

/** The catalog of {@link CompactionEvents}, defined by the compaction plugin. */
export const compactionEvents: EventCatalog<CompactionEvents> = defineEvents<CompactionEvents>({
  'agent/compaction': 'emit',
})
