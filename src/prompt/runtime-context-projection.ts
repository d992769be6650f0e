import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { IdSource } from '../kernel/host-services.js'
import type { UserContentBlock } from '../session/content-block.js'
import type { UserMessage, UserMessageSource } from '../session/message.js'
import type { SessionEvent } from '../session/session-event.js'
import type { Session } from '../session/session.js'
import type { PromptTemplateSection } from './render-prompt.js'

/** The first line of every runtime-context snapshot, followed by `"\n\n"` and the contexts. */
export const RUNTIME_CONTEXT_HEADER = 'Runtime context (this replaces any earlier runtime context):'

/** The whole text of the snapshot logged when every context is gone but an earlier snapshot exists. */
export const RUNTIME_CONTEXT_CLEARED = 'Runtime context: none. Any earlier runtime context is no longer in effect.'

/** The `source.plugin` of the messages a {@link RuntimeContextProjection} owns. */
export const RUNTIME_CONTEXT_PLUGIN = 'yoke/runtime-context'

/** What {@link createRuntimeContextProjection} takes. */
export interface RuntimeContextProjectionOptions {
  /** The session whose log the snapshots go to (read only, never written). */
  readonly session: Session
  /** The id source; `ids('message')` names each new snapshot. */
  readonly ids: IdSource
}

/** The runtime-context projection of one agent. */
export interface RuntimeContextProjection {
  /**
   * The snapshot message for this step, or `undefined` when none is due: nothing was ever logged
   * and every context is empty, or the retained snapshot already says exactly this. Writes
   * nothing; the caller logs the message (`user/message`, `surfaceOp: 'append'`) or drops it, and a
   * dropped one is projected again next time. O(new events since the last call + snapshot text).
   *
   * @param rendered - the rendered contexts in order (`renderPrompt(…, { kind: 'context' })` each); empty or whitespace-only ones are skipped
   * @returns a new deep-frozen snapshot, or `undefined`
   * @throws {@link InvalidArgumentError} when `rendered` is not an array of `{ name, text }` strings
   */
  project(rendered: readonly PromptTemplateSection[]): UserMessage | undefined
  /** The seq of the retained snapshot (the newest owned message still in effect), or `undefined`. */
  readonly retainedSeq: number | undefined
}

interface Retained {
  readonly seq: number
  readonly content: readonly UserContentBlock[]
}

const snapshotSource: UserMessageSource = Object.freeze({
  kind: 'plugin',
  plugin: RUNTIME_CONTEXT_PLUGIN,
  form: 'snapshot',
})

/**
 * Whether `event` is a snapshot a projection owns: a `user/message` whose source is the plugin
 * `yoke/runtime-context` with form `snapshot`.
 *
 * @param event - a committed event
 * @returns `true` for an owned snapshot
 */
export function isRuntimeContextSnapshot(event: SessionEvent): boolean {
  if (event.type !== 'user/message') return false
  const source = (event.data as unknown as UserMessage).source
  return source.kind === 'plugin' && source.plugin === RUNTIME_CONTEXT_PLUGIN && source.form === 'snapshot'
}

/**
 * Creates the runtime-context projection of one session. Construction scans the log backwards once
 * for the newest owned snapshot that is a current surface node (the retained one). Afterwards the
 * projection follows the log incrementally, each committed event read once, lazily when
 * {@link RuntimeContextProjection.project} (or `retainedSeq`) runs: a committed owned snapshot
 * becomes the retained one, and a replace-form event whose `sourceEventSeqs` include the retained
 * seq clears it. It registers no listener, so there is nothing to dispose, and it works for
 * registered and unregistered sessions alike.
 *
 * @param options - the session and the id source
 * @returns the projection
 * @throws {@link InvalidArgumentError} when `session` or `ids` has the wrong shape
 * @example
 * ```ts
 * const projection = createRuntimeContextProjection({ session, ids })
 * const candidate = projection.project([{ name: 'mode', text: 'Mode: plan' }])
 * // candidate.content[0].text === RUNTIME_CONTEXT_HEADER + '\n\nMode: plan'
 * ```
 */
export function createRuntimeContextProjection(options: RuntimeContextProjectionOptions): RuntimeContextProjection {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({ argument: 'options', reason: 'must be { session, ids }', value: options })
  }
  const { session, ids } = options
  if (!isSessionLike(session)) {
    throw new InvalidArgumentError({ argument: 'options.session', reason: 'must be a Session', value: session })
  }
  if (typeof ids !== 'function') {
    throw new InvalidArgumentError({
      argument: 'options.ids',
      reason: 'must be an id source (kind) => string',
      value: ids,
    })
  }
  let retained: Retained | undefined
  let everOwned = false
  let cursor = session.length
  const surface = new Set(session.surfaceNodes())
  for (let seq = cursor - 1; seq >= 0; seq--) {
    const event = session.at(seq) as SessionEvent
    if (!isRuntimeContextSnapshot(event)) continue
    everOwned = true
    if (surface.has(seq)) {
      retained = retainedOf(event)
      break
    }
  }

  const catchUp = (): void => {
    for (const length = session.length; cursor < length; cursor++) {
      const event = session.at(cursor) as SessionEvent
      if (isRuntimeContextSnapshot(event)) {
        everOwned = true
        retained = retainedOf(event)
      } else if (
        retained !== undefined &&
        typeof event.surfaceOp === 'object' &&
        event.sourceEventSeqs?.includes(retained.seq) === true
      ) {
        retained = undefined
      }
    }
  }

  return {
    project(rendered) {
      const text = snapshotText(rendered)
      catchUp()
      if (text === undefined && !everOwned) return undefined
      const wanted = text ?? RUNTIME_CONTEXT_CLEARED
      if (retained !== undefined && saysExactly(retained.content, wanted)) return undefined
      const block: UserContentBlock = Object.freeze({ type: 'text', text: wanted })
      return Object.freeze({
        id: ids('message'),
        role: 'user',
        content: Object.freeze([block]),
        source: snapshotSource,
      })
    },
    get retainedSeq() {
      catchUp()
      return retained?.seq
    },
  }
}

/** The snapshot text of the non-empty contexts, or `undefined` when there is none. */
function snapshotText(rendered: readonly PromptTemplateSection[]): string | undefined {
  if (!Array.isArray(rendered)) {
    throw new InvalidArgumentError({
      argument: 'rendered',
      reason: 'must be an array of { name, text } contexts',
      value: rendered,
    })
  }
  let text: string | undefined
  for (const [index, context] of (rendered as readonly unknown[]).entries()) {
    const record = context as { readonly name?: unknown; readonly text?: unknown } | null
    if (
      typeof record !== 'object' ||
      record === null ||
      typeof record.name !== 'string' ||
      typeof record.text !== 'string'
    ) {
      throw new InvalidArgumentError({
        argument: `rendered[${index}]`,
        reason: 'must be a { name, text } context with string fields',
        value: context,
      })
    }
    if (record.text.trim() === '') continue
    text = `${text ?? RUNTIME_CONTEXT_HEADER}\n\n${record.text}`
  }
  return text
}

function retainedOf(event: SessionEvent): Retained {
  return { seq: event.seq, content: (event.data as unknown as UserMessage).content }
}

/** Exactly one text block with exactly this text (anything else never compares equal). */
function saysExactly(content: readonly UserContentBlock[], text: string): boolean {
  const [first] = content
  return content.length === 1 && first !== undefined && first.type === 'text' && first.text === text
}

function isSessionLike(value: unknown): value is Session {
  if (typeof value !== 'object' || value === null) return false
  const record = value as { readonly at?: unknown; readonly surfaceNodes?: unknown; readonly length?: unknown }
  return (
    typeof record.at === 'function' && typeof record.surfaceNodes === 'function' && typeof record.length === 'number'
  )
}
