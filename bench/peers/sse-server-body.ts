/** The streamed answer of the loopback server: what it sends and what every stream case must read. */

/** The text of every delta. */
export const STREAMED_DELTA = 'tok '

/** The whole SSE body of one answer of `deltas` text deltas, a finish chunk with usage, and `[DONE]`. */
export function sseBody(deltas: number): string {
  const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'fake' }
  const events: string[] = [
    JSON.stringify({
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    }),
  ]
  for (let index = 0; index < deltas; index++)
    events.push(
      JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: STREAMED_DELTA }, finish_reason: null }] }),
    )
  events.push(
    JSON.stringify({
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: deltas, total_tokens: deltas + 5 },
    }),
  )
  return `${events.map((event) => `data: ${event}\n\n`).join('')}data: [DONE]\n\n`
}
