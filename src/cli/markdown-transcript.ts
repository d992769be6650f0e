/**
 * The `export --format markdown` transcript: `# Session <id>`, then per turn
 * `## Turn <n> (<reason>)` and that turn's user, assistant and tool messages from
 * `deriveMessages`.
 *
 * @module
 */
import { createSession } from '../session/create-session.js'
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../session/message.js'
import type { SessionCatalog } from '../session/session-catalog.js'
import type { SessionEvent } from '../session/session-event.js'

interface TurnRange {
  readonly turn: number
  readonly startSeq: number
  reason: string
}

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null ? (value as Readonly<Record<string, unknown>>) : {}
}

function turnRanges(events: readonly SessionEvent[]): TurnRange[] {
  const ranges: TurnRange[] = []
  for (const event of events) {
    const data = record(event.data)
    if (event.type === 'turn/start') ranges.push({ turn: Number(data['turn']), startSeq: event.seq, reason: 'open' })
    else if (event.type === 'turn/end') {
      const last = ranges.at(-1)
      const kind = record(data['reason'])['kind']
      if (last !== undefined) last.reason = typeof kind === 'string' ? kind : 'unknown'
    }
  }
  return ranges
}

/** The index of the last range starting before `seq`, or `-1` before the first turn. */
function rangeIndexOf(ranges: readonly TurnRange[], seq: number): number {
  let index = -1
  while (index + 1 < ranges.length && (ranges[index + 1] as TurnRange).startSeq < seq) index++
  return index
}

function quoted(text: string): string {
  return text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n')
}

function toolResultSection(message: ToolResultMessage, toolNames: ReadonlyMap<string, string>): string {
  const block = message.content[0]
  const body = block.content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType}]`)).join('\n')
  const callId = message.source.callId
  return `### Tool result: ${toolNames.get(callId) ?? 'tool'} (${callId})${block.isError === true ? ' — error' : ''}\n\n${body}`
}

function assistantSection(message: AssistantMessage, toolNames: Map<string, string>): string {
  const parts = message.content.map((block) => {
    if (block.type === 'text') return block.text
    if (block.type === 'reasoning') return quoted(block.text)
    toolNames.set(block.id, block.name)
    return `→ ${block.name} ${block.arguments}`
  })
  return `### Assistant\n\n${parts.join('\n\n')}`
}

function userSection(message: UserMessage): string {
  const source = message.source
  const label =
    source.kind === 'plugin'
      ? `User (plugin ${source.plugin}${source.form === undefined ? '' : `, ${source.form}`})`
      : 'User'
  const body = message.content
    .map((block) => (block.type === 'text' ? block.text : `[image ${block.mediaType}]`))
    .join('\n\n')
  return `### ${label}\n\n${body}`
}

function messageSection(message: Message, toolNames: Map<string, string>): string {
  if (message.role === 'assistant') return assistantSection(message, toolNames)
  if (message.source.kind === 'tool') return toolResultSection(message as ToolResultMessage, toolNames)
  return userSection(message as UserMessage)
}

/**
 * Renders a log as a Markdown transcript. Messages before the first turn (none in logs the agent
 * loop writes) come right after the title.
 *
 * @param id - the session id
 * @param events - the log, balanced (an open turn is shown as `(open)`)
 * @param catalog - the event catalog the log was checked against
 * @returns the Markdown, ending with a newline
 */
export function markdownTranscript(id: string, events: readonly SessionEvent[], catalog: SessionCatalog): string {
  const session = createSession({ id, seed: events, catalog })
  const seqOf = new Map<object, number>()
  for (const seq of session.surfaceNodes()) {
    const event = session.events[seq] as SessionEvent
    const data = record(event.data)
    seqOf.set((event.type === 'user/message' ? data : record(data['message'])) as object, seq)
  }
  const ranges = turnRanges(session.events)
  const sections: string[][] = ranges.map(() => [])
  const preamble: string[] = []
  const toolNames = new Map<string, string>()
  for (const message of session.deriveMessages()) {
    const index = rangeIndexOf(ranges, seqOf.get(message) ?? -1)
    ;(index === -1 ? preamble : (sections[index] as string[])).push(messageSection(message, toolNames))
  }
  const blocks = [`# Session ${id}`, ...preamble]
  for (const [index, range] of ranges.entries())
    blocks.push(`## Turn ${range.turn} (${range.reason})`, ...(sections[index] as string[]))
  return `${blocks.join('\n\n')}\n`
}
