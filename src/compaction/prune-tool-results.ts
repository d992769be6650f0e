import { InvalidOptionsError } from '../errors/invalid-options-error.js'
import type { ImageBlock, TextBlock } from '../session/content-block.js'
import type { ToolResultData } from '../session/core-event-types.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-event.js'
import type { CompactionTrigger, PruneAction } from './compaction-actions.js'
import type { CompactionPruneData } from './compaction-events.js'
import { messageTokens } from './estimate-tokens.js'

/** Options of {@link pruneToolResults}. */
export interface PruneOptions {
  /**
   * A result is eligible when its inner text has more code points than this (a positive integer).
   *
   * @default 8192
   */
  readonly minChars?: number
  /**
   * How many leading code points to keep: `0 ≤ keepHeadChars ≤ minChars − 200`.
   *
   * @default 0
   */
  readonly keepHeadChars?: number
  /** What runs the pruner, logged on `compaction/prune`. */
  readonly trigger: CompactionTrigger
}

/** The `prune` option of `basicCompaction`: the pruner's bounds. */
export type PruneConfig = Omit<PruneOptions, 'trigger'>

/**
 * Checks the pruner's bounds.
 *
 * @param options - `minChars` and `keepHeadChars`
 * @returns the resolved bounds
 * @throws {@link InvalidOptionsError} (`INVALID_OPTIONS`, `field`) for a bound out of range
 * @internal
 */
export function checkPruneBounds(options: PruneConfig): { readonly minChars: number; readonly keepHeadChars: number } {
  const minChars = options.minChars ?? 8192
  const keepHeadChars = options.keepHeadChars ?? 0
  if (!Number.isSafeInteger(minChars) || minChars < 1) {
    throw new InvalidOptionsError({
      issues: [{ path: ['minChars'], message: 'must be a positive integer' }],
      value: minChars,
    })
  }
  if (!Number.isSafeInteger(keepHeadChars) || keepHeadChars < 0 || keepHeadChars > minChars - 200) {
    throw new InvalidOptionsError({
      issues: [{ path: ['keepHeadChars'], message: `must be an integer from 0 to minChars - 200 (${minChars - 200})` }],
      value: keepHeadChars,
    })
  }
  return { minChars, keepHeadChars }
}

/**
 * The placeholder text of a pruned result.
 *
 * @param originalChars - the inner text's length in code points
 * @returns the text
 * @internal
 */
export function prunePlaceholder(originalChars: number): string {
  return `[Tool output removed to save context: ${originalChars} characters. Run the tool again if you need it.]`
}

function innerText(data: ToolResultData): string {
  return data.message.content[0].content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('')
}

/**
 * Rewrites every old large tool result to a short placeholder, model-free.
 * Eligible: each append-form `tool/result` surface node whose inner text exceeds `minChars` code
 * points, oldest first. Per result it appends `compaction/prune`, then immediately the content-only
 * `tool/result` rewrite (same message id, call id, `isError`, `error` and `meta`). A second pass
 * appends nothing.
 *
 * @param session - the session, with an open turn
 * @param options - `minChars`, `keepHeadChars` and the trigger
 * @returns the pruned and replacement seqs and the tokens saved
 * @throws {@link InvalidOptionsError} for bounds out of range (nothing appended); `StructureError`
 *   `NO_OPEN_TURN` outside a turn (nothing appended); any other append failure, unchanged
 * @example
 * ```ts
 * const { prunedSeqs } = pruneToolResults(agent.session, { trigger: 'pressure', keepHeadChars: 200 })
 * ```
 */
export function pruneToolResults(session: Session, options: PruneOptions): PruneAction {
  const { minChars, keepHeadChars } = checkPruneBounds(options)
  const targets: { readonly event: SessionEvent; readonly text: readonly string[] }[] = []
  for (const seq of session.surfaceNodes()) {
    const event = session.at(seq) as SessionEvent
    if (event.type !== 'tool/result' || event.surfaceOp !== 'append') continue
    const text = [...innerText(event.data as unknown as ToolResultData)]
    if (text.length > minChars) targets.push({ event, text })
  }
  const prunedSeqs: number[] = []
  const replacementSeqs: number[] = []
  let savedTokens = 0
  for (const { event, text } of targets) {
    const data = event.data as unknown as ToolResultData
    const head = text.slice(0, keepHeadChars).join('')
    const placeholder: TextBlock = {
      type: 'text',
      text: `${head}${head === '' ? '' : '\n'}${prunePlaceholder(text.length)}`,
    }
    const content: readonly (TextBlock | ImageBlock)[] = [placeholder]
    const block = { ...data.message.content[0], content }
    const rewritten: ToolResultData = { ...data, message: { ...data.message, content: [block] } }
    const prune: CompactionPruneData = {
      trigger: options.trigger,
      targetSeq: event.seq,
      originalChars: text.length,
      keptChars: Math.min(keepHeadChars, text.length),
    }
    const pruneSeq = session.append('compaction/prune', prune).seq
    const replacement = session.append('tool/result', rewritten, {
      surfaceOp: { op: 'replace', start: event.seq, end: event.seq },
      sourceEventSeqs: [pruneSeq, event.seq],
    })
    prunedSeqs.push(event.seq)
    replacementSeqs.push(replacement.seq)
    savedTokens += messageTokens(data.message) - messageTokens(rewritten.message)
  }
  return Object.freeze({
    kind: 'prune',
    prunedSeqs: Object.freeze(prunedSeqs),
    replacementSeqs: Object.freeze(replacementSeqs),
    savedTokens,
  })
}
