/**
 * The tools guide's example (docs/tools.md): two tools defined with `defineTool` —
 * one with a zod schema that may run in parallel and honours the abort signal, one with a raw JSON
 * Schema that runs alone — and an agent whose model calls them. The results go back to the model
 * in the second request of the turn, which answers from them.
 *
 * Prints the live `tools/result` order (completion order), the step's durable log (model order),
 * one JSON line per event, and the tool results the second request carried.
 *
 * Run: `npm run example -- custom-tool`
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { createHarness, defineTool, type ModelRequest, toolResult } from 'yoke'
import { fakeIds, scriptedModel, text } from 'yoke/testing'

const forecasts: Readonly<
  Record<string, { readonly celsius: number; readonly sky: string; readonly latencyMs: number }>
> = {
  Paris: { celsius: 18, sky: 'light rain', latencyMs: 40 },
  Oslo: { celsius: 4, sky: 'clear', latencyMs: 5 },
}

/** A zod tool: typed, validated arguments; safe to run next to other calls. */
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: z.object({ city: z.string().min(1), unit: z.enum(['C', 'F']).default('C') }),
  // The concurrency class: exactly `true` lets calls run side by side; anything else runs alone.
  isConcurrencySafe: () => true,
  async execute({ city, unit }, context) {
    const forecast = forecasts[city]
    // A plain string or any JSON value is the result text; toolResult() adds isError, meta and the rest.
    if (forecast === undefined) return toolResult({ content: `no forecast for ${city}`, isError: true })
    context.reportProgress({ city, status: 'fetching' })
    // The abort signal fires when the turn is cancelled or the call's deadline passes: pass it on.
    await sleep(forecast.latencyMs, undefined, { signal: context.signal })
    const degrees = unit === 'C' ? forecast.celsius : Math.round(forecast.celsius * 1.8 + 32)
    return toolResult({
      content: `${city}: ${degrees}°${unit}, ${forecast.sky}`,
      meta: { city, celsius: forecast.celsius },
    })
  },
})

/** A raw JSON Schema tool: arguments arrive parsed but unvalidated; no classifier, so it runs alone. */
const saveNote = defineTool({
  name: 'save_note',
  description: 'Save a note for the user',
  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args) =>
    toolResult({ content: 'saved', additionalContexts: [`The user now has a note: ${String(args['text'])}`] }),
})

/** The tool results a request carries, as `<call id>: <text>`. */
function toolResultsOf(request: ModelRequest): string[] {
  return request.messages.flatMap((message) =>
    message.content.flatMap((block) =>
      typeof block !== 'string' && block.type === 'tool-result'
        ? [
            `${block.toolCallId}: ${block.content.map((part) => (part.type === 'text' ? part.text : part.type)).join(' ')}`,
          ]
        : [],
    ),
  )
}

// Step 1: the model asks for three calls. Step 2: a function entry sees the request, so it can
// answer from the results the agent loop sent back.
const model = scriptedModel([
  {
    toolCalls: [
      { id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'c2', name: 'get_weather', arguments: { city: 'Oslo', unit: 'F' } },
      { id: 'c3', name: 'save_note', arguments: { text: 'pack an umbrella' } },
    ],
  },
  (request) => text(`Noted. ${toolResultsOf(request).slice(0, 2).join('; ')}.`),
])

// Deterministic ids so the printed log matches docs/tools.md; a real host keeps the default.
const harness = await createHarness({ model, tools: [getWeather, saveNote], ids: fakeIds() })
console.log(
  'schemas:',
  harness.tools
    .schemas()
    .map((schema) => schema.name)
    .join(', '),
)

const live: string[] = []
harness.on('tools/result', ({ call }) => live.push(call.callId))
harness.on('tools/progress', ({ callId, progress }) => console.log(`progress ${callId}: ${JSON.stringify(progress)}`))

const agent = await harness.createAgent()
const result = await agent.run('Weather in Paris and Oslo (in F)? And note that I should pack an umbrella.')

console.log('live tools/result order:', live.join(', '))
console.log('the tool calls in the log:')
for (const event of agent.session.events.filter(
  (event) => event.type === 'tool/call' || event.type === 'tool/result',
)) {
  console.log(JSON.stringify({ seq: event.seq, type: event.type, data: event.data }))
}
const second = model.requests[1]!
console.log('the second request carried:', toolResultsOf(second).join(' | '))
console.log('and the context save_note added:', JSON.stringify(second.messages.at(-1)?.content))
console.log(`answer: ${result.text}`)
console.log(`turn ${result.turn} ${result.reason.kind}, ${model.requests.length} requests`)
await harness.close()
if (result.reason.kind !== 'completed') process.exitCode = 1
