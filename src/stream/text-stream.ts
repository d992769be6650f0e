import type { AgentStreamEvent } from './agent-stream-event.js'

/**
 * The text the model writes, delta by delta: the `text-delta` chunks of the `assistant/chunk`
 * events of a run (or any stream of events), without reasoning or tool calls. Breaking out of
 * the loop stops the underlying iteration.
 *
 * @param events - a run from `agent.stream()`, a session stream, or any such events
 * @returns the text deltas, in order
 * @example
 * ```ts
 * for await (const text of textStream(agent.stream('Tell me a story'))) process.stdout.write(text)
 * ```
 */
export async function* textStream(events: AsyncIterable<AgentStreamEvent>): AsyncGenerator<string, void, undefined> {
  for await (const event of events) {
    if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') yield event.data.chunk.text
  }
}
