/**
 * The tools guide's example (docs/tools.md): a zod tool and a raw JSON Schema tool, registered
 * globally, then one step's three tool calls run through the scheduler on a real session (the
 * agent loop would build the step context; here it is built by hand). Prints the live
 * `tools/result` order (completion order) and the step's durable log (model order), one JSON line
 * per event.
 *
 * Run: `npm run example -- custom-tool`
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import {
  createApprovalBroker,
  createHarness,
  defaultToolRunOptions,
  defineTool,
  runToolCalls,
  type ToolAgent,
  type ToolCallBlock,
  type ToolContextMessage,
  type ToolStepContext,
} from 'yoke'
import { fakeIds } from 'yoke/testing'

const forecasts: Readonly<Record<string, { readonly celsius: number; readonly sky: string; readonly latencyMs: number }>> = {
  Paris: { celsius: 18, sky: 'light rain', latencyMs: 40 },
  Oslo: { celsius: 4, sky: 'clear', latencyMs: 5 },
}

/** A zod tool: typed, validated arguments; safe to run next to other calls. */
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: z.object({ city: z.string().min(1), unit: z.enum(['C', 'F']).default('C') }),
  isConcurrencySafe: () => true,
  async execute({ city, unit }, context) {
    const forecast = forecasts[city]
    if (forecast === undefined) return { content: `no forecast for ${city}`, isError: true }
    context.reportProgress({ city, status: 'fetching' })
    await sleep(forecast.latencyMs, undefined, { signal: context.signal })
    const degrees = unit === 'C' ? forecast.celsius : Math.round(forecast.celsius * 1.8 + 32)
    return { content: `${city}: ${degrees}°${unit}, ${forecast.sky}`, meta: { city, celsius: forecast.celsius } }
  },
})

/** A raw JSON Schema tool: arguments arrive parsed but unvalidated; no classifier, so it runs alone. */
const saveNote = defineTool({
  name: 'save_note',
  description: 'Save a note for the user',
  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args) => ({ content: 'saved', additionalContexts: [`The user now has a note: ${String(args['text'])}`] }),
})

// Deterministic ids so the printed log matches docs/tools.md; a real host keeps the default.
const harness = await createHarness({ ids: fakeIds() })
harness.tools.register([getWeather, saveNote])
console.log('schemas:', harness.tools.schemas().map((schema) => schema.name).join(', '))

const live: string[] = []
harness.on('tools/result', ({ call }) => live.push(call.callId))
harness.on('tools/progress', ({ callId, progress }) => console.log(`progress ${callId}: ${JSON.stringify(progress)}`))

const session = harness.sessions.create()
const agent: ToolAgent = { id: session.id, session }
const agentCtx = harness.ctx.child('agent', { scope: agent })
const calls: ToolCallBlock[] = [
  { type: 'tool-call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { type: 'tool-call', id: 'c2', name: 'get_weather', arguments: '{"city":"Oslo","unit":"F"}' },
  { type: 'tool-call', id: 'c3', name: 'save_note', arguments: '{"text":"pack an umbrella"}' },
]

// What the agent loop does around a step: open it, log the model's answer, run its calls, close it.
session.append('turn/start', { turn: 1 })
session.append('step/start', { turn: 1, step: 1 })
const first = session.length
session.append(
  'assistant/message',
  { turn: 1, step: 1, message: { id: 'answer-1', role: 'assistant', content: calls, source: { kind: 'model', provider: 'example', model: 'example' } } },
  { surfaceOp: 'append', sourceEventSeqs: [] },
)
const contexts: ToolContextMessage[] = []
const step: ToolStepContext = {
  ctx: agentCtx,
  agent,
  session,
  turn: 1,
  step: 1,
  signal: new AbortController().signal,
  scope: agent,
  options: defaultToolRunOptions,
  checkpoint: async () => {
    await harness.sessions.flush(session)
  },
  insertContext: (message) => contexts.push(message),
  approvals: createApprovalBroker({ ctx: agentCtx, agent }),
}
const report = await runToolCalls(calls, step)
session.append('step/end', { turn: 1, step: 1 })
// An `owed` outcome means the loop would send the results back in step 2; this example stops here.
session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })

console.log('step outcome:', report.outcome)
console.log('live tools/result order:', live.join(', '))
console.log('contexts for the next step:', contexts.flatMap((message) => message.content).map((block) => (block.type === 'text' ? block.text : block.type)))
console.log('the step in the log:')
for (const event of session.events.slice(first)) console.log(JSON.stringify({ seq: event.seq, type: event.type, data: event.data }))
await harness.close()
