import { ErrorCode } from '../errors/codes.js'
import type { SessionErrorLocation } from '../errors/session-error.js'
import { SurfaceError, type SurfaceErrorCode, type SurfaceErrorFields } from '../errors/surface-error.js'
import { isSurfaceType } from './core-event-types.js'
import { firstDifference } from './first-difference.js'
import type { JsonValue } from './json-value.js'
import type { Message } from './message.js'
import type { SessionEvent, SurfaceReplace } from './session-event.js'
import { toolCallIdsOf } from './structure-state.js'

/** One replace found by {@link foldSurface}. */
export interface SurfaceReplacement {
  /** The replacing event. */
  readonly seq: number
  /** Its `surfaceOp.start`. */
  readonly start: number
  /** Its `surfaceOp.end`. */
  readonly end: number
  /** The nodes it shadowed, in surface order. */
  readonly shadowedSeqs: readonly number[]
}

/** The surface of a log: its nodes and the replaces that shaped it. */
export interface SurfaceFold {
  /** The seqs of the message events that form model history, in order. */
  readonly nodes: readonly number[]
  /** Every replace, in log order. */
  readonly replacements: readonly SurfaceReplacement[]
}

/** @internal What a checked candidate does to the surface. */
export type SurfacePlan =
  | undefined
  | { readonly kind: 'append' }
  | {
      readonly kind: 'replace'
      readonly startIndex: number
      readonly endIndex: number
      readonly shadowed: readonly number[]
    }

interface Pair {
  assistantSeq: number | undefined
  resultSeq: number | undefined
}

interface StepData {
  readonly turn: number
  readonly step: number
  readonly message: { readonly source: { readonly callId: string }; readonly content: readonly JsonValue[] }
}

const appendPlan = Object.freeze({ kind: 'append' as const })

function fail(
  code: SurfaceErrorCode,
  where: SessionErrorLocation,
  detail: string,
  fields: SurfaceErrorFields = {},
): SurfaceError {
  return new SurfaceError({ code, detail, ...where, ...fields })
}

function isSafeIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function pairKey(turn: number, step: number, callId: string): string {
  return `${turn}\u0000${step}\u0000${callId}`
}

/** A message event's projection into model history. */
function projectionOf(event: SessionEvent): Message | undefined {
  if (event.type === 'user/message') return event.data as unknown as Message
  const message = (event.data as unknown as { readonly message: Message }).message
  if (event.type === 'assistant/message' && message.content.length === 0) return undefined
  return message
}

/** Blanks `message.content[0].content` of tool-result data, for the rewrite rule. */
function blankResultContent(data: JsonValue): JsonValue {
  const record = data as { readonly message: { readonly content: readonly { readonly [key: string]: JsonValue }[] } }
  const [first, ...rest] = record.message.content
  return {
    ...(data as { readonly [key: string]: JsonValue }),
    message: {
      ...(record.message as unknown as { readonly [key: string]: JsonValue }),
      content: [{ ...first, content: [] }, ...rest],
    },
  }
}

/**
 * @internal The surface of one session: nodes, tool pairs and the incremental projection.
 */
export class SurfaceState {
  readonly nodes: number[] = []
  readonly replacements: SurfaceReplacement[] = []
  readonly #position = new Map<number, number>()
  readonly #pairs = new Map<string, Pair>()
  readonly #assistantKeys = new Map<number, readonly string[]>()
  readonly #resultKeys = new Map<number, string>()
  readonly #eventAt: (seq: number) => SessionEvent
  #projection: Message[] = []
  #derived: readonly Message[] | undefined = Object.freeze([])
  #frozenNodes: readonly number[] | undefined = Object.freeze([])

  constructor(eventAt: (seq: number) => SessionEvent) {
    this.#eventAt = eventAt
  }

  /** Checks a candidate's markers, provenance and replace; throws {@link SurfaceError}. */
  check(event: SessionEvent, where: SessionErrorLocation): SurfacePlan {
    const eligible = isSurfaceType(event.type)
    const op: unknown = event.surfaceOp
    const sources: unknown = event.sourceEventSeqs
    if (!eligible) {
      if (op !== undefined || sources !== undefined) {
        const field = op !== undefined ? 'surfaceOp' : 'sourceEventSeqs'
        throw fail(
          ErrorCode.SURFACE_MARKER_FORBIDDEN,
          where,
          `${event.type} is not a message event and cannot carry ${field}`,
          { field },
        )
      }
      return undefined
    }
    if (op === undefined) {
      throw fail(ErrorCode.SURFACE_MARKER_REQUIRED, where, `${event.type} needs surfaceOp ('append' or a replace)`, {
        field: 'surfaceOp',
      })
    }
    let replace: SurfaceReplace | undefined
    if (op !== 'append') {
      const candidate = op as { readonly [key: string]: unknown }
      const keys = typeof op === 'object' && op !== null && !Array.isArray(op) ? Object.keys(candidate) : undefined
      const wellFormed =
        keys !== undefined &&
        keys.length === 3 &&
        candidate['op'] === 'replace' &&
        isSafeIndex(candidate['start']) &&
        isSafeIndex(candidate['end'])
      if (!wellFormed) {
        throw fail(
          ErrorCode.INVALID_SURFACE_OP,
          where,
          `surfaceOp must be 'append' or { op: 'replace', start, end } with non-negative integer seqs (got ${JSON.stringify(op)})`,
          {
            field: 'surfaceOp',
          },
        )
      }
      replace = op as SurfaceReplace
    }
    if (sources !== undefined) this.#checkSources(event, sources, where)
    if (replace === undefined) return appendPlan
    return this.#checkReplace(event, replace, where)
  }

  #checkSources(event: SessionEvent, sources: unknown, where: SessionErrorLocation): void {
    const invalid = (reason: string, detail: string): SurfaceError =>
      fail(ErrorCode.INVALID_SOURCES, where, `sourceEventSeqs ${detail}`, { field: 'sourceEventSeqs', reason })
    if (!Array.isArray(sources)) throw invalid('not-array', 'must be an array of earlier seqs')
    if (sources.length === 0 && event.type !== 'assistant/message') {
      throw invalid('empty', 'may be empty only on assistant/message (omit it when nothing is recorded)')
    }
    for (const value of sources)
      if (!isSafeIndex(value))
        throw invalid('not-integer', `must hold non-negative integers (got ${JSON.stringify(value)})`)
    const seen = new Set<number>()
    for (const value of sources as number[]) {
      if (seen.has(value)) throw invalid('duplicate', `lists seq ${value} twice`)
      seen.add(value)
    }
    for (const value of sources as number[]) {
      if (value >= event.seq) throw invalid('not-earlier', `lists seq ${value}, which is not earlier than ${event.seq}`)
    }
  }

  #checkReplace(event: SessionEvent, replace: SurfaceReplace, where: SessionErrorLocation): SurfacePlan {
    const startIndex = this.#position.get(replace.start)
    if (startIndex === undefined) {
      throw fail(ErrorCode.REPLACE_NOT_FOUND, where, `replace start ${replace.start} is not a surface node`, {
        which: 'start',
      })
    }
    const endIndex = this.#position.get(replace.end)
    if (endIndex === undefined) {
      throw fail(ErrorCode.REPLACE_NOT_FOUND, where, `replace end ${replace.end} is not a surface node`, {
        which: 'end',
      })
    }
    if (startIndex > endIndex) {
      throw fail(
        ErrorCode.REPLACE_REVERSED,
        where,
        `replace start ${replace.start} comes after end ${replace.end} on the surface`,
      )
    }
    const shadowed = this.nodes.slice(startIndex, endIndex + 1)
    const listed = new Set(event.sourceEventSeqs ?? [])
    const missing = shadowed.filter((seq) => !listed.has(seq))
    if (missing.length > 0) {
      throw fail(
        ErrorCode.REPLACE_UNCOVERED,
        where,
        `replace shadows seqs ${missing.join(', ')} that sourceEventSeqs does not list`,
        { missing },
      )
    }
    if (event.type === 'tool/result') {
      if (shadowed.length !== 1) {
        throw fail(
          ErrorCode.REWRITE_NOT_SINGLE,
          where,
          `a tool-result rewrite must shadow exactly one node (shadows ${shadowed.length})`,
        )
      }
      const target = this.#eventAt(shadowed[0] as number)
      if (target.type !== 'tool/result') {
        throw fail(
          ErrorCode.REWRITE_NOT_TOOL_RESULT,
          where,
          `a tool-result rewrite must shadow a tool/result (seq ${target.seq} is ${target.type})`,
        )
      }
      const difference = firstDifference(blankResultContent(target.data), blankResultContent(event.data), 'data')
      if (difference !== undefined) {
        throw fail(
          ErrorCode.REWRITE_NOT_CONTENT_ONLY,
          where,
          `a tool-result rewrite may change only message.content[0].content (differs at ${difference})`,
          {
            path: difference,
          },
        )
      }
    } else {
      this.#checkPairs(shadowed, where)
    }
    return { kind: 'replace', startIndex, endIndex, shadowed }
  }

  #checkPairs(shadowed: readonly number[], where: SessionErrorLocation): void {
    const inRun = new Set(shadowed)
    for (const seq of shadowed) {
      for (const key of this.#assistantKeys.get(seq) ?? []) {
        const pair = this.#pairs.get(key) as Pair
        const resultOutside =
          pair.resultSeq !== undefined && this.#position.has(pair.resultSeq) && !inRun.has(pair.resultSeq)
        if (pair.resultSeq === undefined || resultOutside) throw this.#splitError(key, pair, where)
      }
      const key = this.#resultKeys.get(seq)
      if (key === undefined) continue
      const pair = this.#pairs.get(key) as Pair
      if (pair.assistantSeq !== undefined && this.#position.has(pair.assistantSeq) && !inRun.has(pair.assistantSeq)) {
        throw this.#splitError(key, pair, where)
      }
    }
  }

  #splitError(key: string, pair: Pair, where: SessionErrorLocation): SurfaceError {
    const callId = key.split('\u0000')[2] as string
    return fail(
      ErrorCode.REPLACE_SPLITS_TOOL_PAIR,
      where,
      `replace would split tool call "${callId}" (assistant seq ${pair.assistantSeq}${pair.resultSeq === undefined ? ', no result yet' : `, result seq ${pair.resultSeq}`})`,
      { callId, assistantSeq: pair.assistantSeq, resultSeq: pair.resultSeq },
    )
  }

  /** Applies a committed event with its plan. */
  apply(event: SessionEvent, plan: SurfacePlan): void {
    if (plan === undefined) return
    this.#trackPairs(event)
    if (plan.kind === 'append') {
      this.#position.set(event.seq, this.nodes.length)
      this.nodes.push(event.seq)
      const message = projectionOf(event)
      if (message !== undefined) {
        this.#projection.push(message)
        this.#derived = undefined
      }
      this.#frozenNodes = undefined
      return
    }
    const replace = event.surfaceOp as SurfaceReplace
    this.replacements.push(
      Object.freeze({
        seq: event.seq,
        start: replace.start,
        end: replace.end,
        shadowedSeqs: Object.freeze([...plan.shadowed]),
      }),
    )
    for (const seq of plan.shadowed) this.#position.delete(seq)
    this.nodes.splice(plan.startIndex, plan.shadowed.length, event.seq)
    for (let index = plan.startIndex; index < this.nodes.length; index++)
      this.#position.set(this.nodes[index] as number, index)
    const projection: Message[] = []
    for (const seq of this.nodes) {
      const message = projectionOf(this.#eventAt(seq))
      if (message !== undefined) projection.push(message)
    }
    this.#projection = projection
    this.#derived = undefined
    this.#frozenNodes = undefined
  }

  #trackPairs(event: SessionEvent): void {
    const data = event.data as unknown as StepData
    if (event.type === 'assistant/message' && event.surfaceOp === 'append') {
      const keys = toolCallIdsOf(event.data).map((callId) => pairKey(data.turn, data.step, callId))
      if (keys.length === 0) return
      for (const key of keys) {
        const pair = this.#pairs.get(key)
        if (pair === undefined) this.#pairs.set(key, { assistantSeq: event.seq, resultSeq: undefined })
        else pair.assistantSeq = event.seq
      }
      this.#assistantKeys.set(event.seq, keys)
    } else if (event.type === 'tool/result') {
      const key = pairKey(data.turn, data.step, data.message.source.callId)
      const pair = this.#pairs.get(key)
      if (pair === undefined) this.#pairs.set(key, { assistantSeq: undefined, resultSeq: event.seq })
      else pair.resultSeq = event.seq
      this.#resultKeys.set(event.seq, key)
    }
  }

  /** The frozen model history, the same array until the projection changes. */
  derived(): readonly Message[] {
    this.#derived ??= Object.freeze(this.#projection.slice())
    return this.#derived
  }

  /** The frozen node list, the same array until it changes. */
  frozenNodes(): readonly number[] {
    this.#frozenNodes ??= Object.freeze(this.nodes.slice())
    return this.#frozenNodes
  }
}

/**
 * Replays a log's surface with the same checks as `append`.
 *
 * @param events - a log, e.g. `session.events`
 * @returns fresh arrays of the nodes and the replaces
 * @throws {@link SurfaceError} as `append` would
 */
export function foldSurface(events: readonly SessionEvent[]): SurfaceFold {
  const state = new SurfaceState((seq) => events[seq] as SessionEvent)
  for (const event of events) state.apply(event, state.check(event, { type: event.type, seq: event.seq }))
  return {
    nodes: [...state.nodes],
    replacements: state.replacements.map((replacement) => ({
      ...replacement,
      shadowedSeqs: [...replacement.shadowedSeqs],
    })),
  }
}
