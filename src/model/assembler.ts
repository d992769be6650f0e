import type { AssistantContentBlock, ReasoningBlock, TextBlock } from '../session/content-block.js'
import type { JsonValue } from '../session/json-value.js'
import type { LlmFailure } from '../session/llm-failure.js'
import type { FinishChunk, StreamChunk, TokenUsage } from '../session/stream-chunk.js'
import { modelFailure } from './failure-defaults.js'

/**
 * What one model call produced: a message (possibly empty only for
 * `max-tokens`), or a failure. Frozen.
 */
export type AssemblerOutcome =
  | {
      /** The call produced a message. */
      readonly kind: 'message'
      /** The blocks in order of first appearance, empty text and reasoning dropped. */
      readonly content: readonly AssistantContentBlock[]
      /** `tool-calls` iff `content` has a tool call; `max-tokens` as the finish said. */
      readonly finishReason: 'stop' | 'tool-calls' | 'max-tokens'
      /** The last `usage` chunk. */
      readonly usage?: TokenUsage
      /** The finish's provider state, for the message source. */
      readonly replayState?: JsonValue
    }
  | {
      /** The call failed. */
      readonly kind: 'failure'
      /** `aborted` only when the finish said so. */
      readonly reason: 'error' | 'aborted'
      /** Why. */
      readonly failure: LlmFailure
      /** The last `usage` chunk. */
      readonly usage?: TokenUsage
    }

/**
 * Turns the chunks of one model call into content. Work is O(bytes): deltas are
 * collected and joined once per block.
 */
export interface Assembler {
  /**
   * Feeds one chunk. Never throws: a protocol violation (a delta or `block-end` whose kind differs
   * from its block's) makes the outcome a `MALFORMED_RESPONSE` failure. Chunks for a block after its
   * `block-end`, and every chunk after the first `finish`, are ignored.
   *
   * @param chunk - the next chunk of the stream
   */
  push(chunk: StreamChunk): void
  /**
   * The outcome of the chunks so far. Before any `finish` was pushed it is a `STREAM_CLOSED`
   * failure (`phase: 'streaming'`), unless a protocol violation was seen (then `MALFORMED_RESPONSE`).
   * A `finish` with reason `error` or `aborted` wins over a protocol violation.
   *
   * @returns the frozen outcome
   */
  outcome(): AssemblerOutcome
  /**
   * The text and reasoning blocks, closed or still open, whose text has a non-whitespace
   * character: what survives an interruption. Tool calls never do.
   *
   * @returns the frozen blocks, in order of first appearance
   */
  interruptedContent(): readonly (TextBlock | ReasoningBlock)[]
  /** The last `usage` chunk pushed, if any. */
  readonly usage: TokenUsage | undefined
}

type BlockKind = AssistantContentBlock['type']

interface BlockState {
  readonly index: number
  readonly kind: BlockKind
  readonly parts: string[]
  id?: string
  name?: string
  closed?: AssistantContentBlock
}

const deltaKinds = { 'text-delta': 'text', 'reasoning-delta': 'reasoning', 'tool-call-delta': 'tool-call' } as const

/**
 * Creates an assembler for one model call.
 *
 * @returns a fresh assembler
 * @example
 * ```ts
 * const assembler = createAssembler()
 * for await (const chunk of models.stream(request)) assembler.push(chunk)
 * const outcome = assembler.outcome()
 * if (outcome.kind === 'message') console.log(outcome.content)
 * ```
 */
export function createAssembler(): Assembler {
  const blocks = new Map<number, BlockState>()
  let usage: TokenUsage | undefined
  let finish: FinishChunk | undefined
  let violation: LlmFailure | undefined
  let cached: AssemblerOutcome | undefined

  const malformed = (index: number, kind: BlockKind, chunkType: string): void => {
    violation ??= modelFailure(
      'MALFORMED_RESPONSE',
      `chunk "${chunkType}" does not fit block ${index} of type "${kind}"`,
      'streaming',
      { detail: { index, blockType: kind, chunk: chunkType } },
    )
  }

  const openBlock = (index: number, kind: BlockKind, chunkType: string): BlockState | undefined => {
    const existing = blocks.get(index)
    if (existing === undefined) {
      const block: BlockState = { index, kind, parts: [] }
      blocks.set(index, block)
      return block
    }
    if (existing.closed !== undefined) return undefined
    if (existing.kind !== kind) {
      malformed(index, existing.kind, chunkType)
      return undefined
    }
    return existing
  }

  const push = (chunk: StreamChunk): void => {
    if (finish !== undefined) return
    cached = undefined
    switch (chunk.type) {
      case 'usage':
        usage = chunk.usage
        return
      case 'finish':
        finish = chunk
        return
      case 'block-start':
        openBlock(chunk.index, chunk.blockType, chunk.type)
        return
      case 'text-delta':
      case 'reasoning-delta':
        openBlock(chunk.index, deltaKinds[chunk.type], chunk.type)?.parts.push(chunk.text)
        return
      case 'tool-call-delta': {
        const block = openBlock(chunk.index, 'tool-call', chunk.type)
        if (block === undefined) return
        block.id ??= chunk.id
        if (chunk.name !== undefined) block.name ??= chunk.name
        block.parts.push(chunk.argumentsDelta)
        return
      }
      case 'block-end': {
        const block = openBlock(chunk.index, chunk.block.type, chunk.type)
        if (block !== undefined) block.closed = copyBlock(chunk.block)
        return
      }
      default: {
        const unexpected: { readonly type?: unknown } = chunk
        violation ??= modelFailure('MALFORMED_RESPONSE', 'unknown chunk type', 'streaming', {
          detail: { chunk: String(unexpected.type) },
        })
      }
    }
  }

  const compute = (): AssemblerOutcome => {
    if (finish === undefined) {
      return failed(
        'error',
        violation ?? modelFailure('STREAM_CLOSED', 'the stream ended without a finish chunk', 'streaming'),
        usage,
      )
    }
    if (finish.reason === 'error' || finish.reason === 'aborted') {
      const failure =
        finish.failure ??
        modelFailure('MALFORMED_RESPONSE', `a "${finish.reason}" finish without a failure`, 'streaming')
      return failed(finish.reason, failure, usage)
    }
    if (violation !== undefined) return failed('error', violation, usage)
    const maxTokens = finish.reason === 'max-tokens'
    const content: AssistantContentBlock[] = []
    for (const block of blocks.values()) {
      if (maxTokens && block.kind === 'tool-call') continue
      const final = block.closed ?? joinBlock(block)
      if (final.type === 'tool-call') {
        const missing = final.id === '' ? 'id' : final.name === '' ? 'name' : undefined
        if (missing !== undefined) {
          const failure = modelFailure(
            'MALFORMED_RESPONSE',
            `tool-call block ${block.index} has no ${missing}`,
            'streaming',
            {
              detail: { index: block.index, missing },
            },
          )
          return failed('error', failure, usage)
        }
      } else if (final.text === '') {
        continue
      }
      content.push(final)
    }
    if (maxTokens) return succeeded(content, 'max-tokens', usage, finish.replayState)
    if (content.length === 0) {
      return failed('error', modelFailure('EMPTY_RESPONSE', 'the model completed without content', 'streaming'), usage)
    }
    const finishReason = content.some((block) => block.type === 'tool-call') ? 'tool-calls' : 'stop'
    return succeeded(content, finishReason, usage, finish.replayState)
  }

  return {
    push,
    outcome() {
      cached ??= compute()
      return cached
    },
    interruptedContent() {
      const kept: (TextBlock | ReasoningBlock)[] = []
      for (const block of blocks.values()) {
        const final = block.closed ?? (block.kind === 'tool-call' ? undefined : joinBlock(block))
        if (final === undefined || final.type === 'tool-call') continue
        if (/\S/.test(final.text)) kept.push(Object.freeze({ type: final.type, text: final.text }))
      }
      return Object.freeze(kept)
    },
    get usage() {
      return usage
    },
  }
}

function joinBlock(block: BlockState): AssistantContentBlock {
  const joined = block.parts.join('')
  // Keep the joined string so a second join (outcome after interruptedContent) copies nothing new.
  block.parts.length = 0
  block.parts.push(joined)
  if (block.kind === 'tool-call') {
    return Object.freeze({ type: 'tool-call', id: block.id ?? '', name: block.name ?? '', arguments: joined })
  }
  return Object.freeze({ type: block.kind, text: joined })
}

function copyBlock(block: AssistantContentBlock): AssistantContentBlock {
  if (block.type === 'tool-call') {
    return Object.freeze({ type: 'tool-call', id: block.id, name: block.name, arguments: block.arguments })
  }
  return Object.freeze({ type: block.type, text: block.text })
}

function frozenUsage(usage: TokenUsage): TokenUsage {
  return Object.isFrozen(usage) ? usage : Object.freeze({ ...usage })
}

function failed(reason: 'error' | 'aborted', failure: LlmFailure, usage: TokenUsage | undefined): AssemblerOutcome {
  const frozenFailure = Object.isFrozen(failure) ? failure : Object.freeze({ ...failure })
  return Object.freeze(
    usage === undefined
      ? { kind: 'failure', reason, failure: frozenFailure }
      : { kind: 'failure', reason, failure: frozenFailure, usage: frozenUsage(usage) },
  )
}

function succeeded(
  content: readonly AssistantContentBlock[],
  finishReason: 'stop' | 'tool-calls' | 'max-tokens',
  usage: TokenUsage | undefined,
  replayState: JsonValue | undefined,
): AssemblerOutcome {
  return Object.freeze({
    kind: 'message',
    content: Object.freeze(content),
    finishReason,
    ...(usage === undefined ? {} : { usage: frozenUsage(usage) }),
    ...(replayState === undefined ? {} : { replayState }),
  })
}
