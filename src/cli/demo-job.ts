/**
 * The pieces of the repository's main job: the two tools, the question, the
 * scripted model and the DeepSeek switch. `examples/main.ts` shows the same job written against
 * the public API; a test checks both print the same transcript.
 *
 * @module
 */
import { z } from 'zod'
import type { ModelAdapter, ModelRoute } from '../model/model-adapter.js'
import type { ModelRequest } from '../model/model-request.js'
import { deepseek } from '../model/openai/deepseek.js'
import type { ScriptedReply } from '../testing/scripted-reply.js'
import { scriptedModel } from '../testing/scripted-model.js'
import { defineTool } from '../tools/define-tool.js'

/** The session the main job runs in. */
export const demoSessionId = 'readme-demo'

/** What the main job asks. */
export const demoQuestion = 'What is the weather in Paris, and what is 2 + 3?'

/** The scripted answer of step 2. */
export const demoAnswer = 'Paris: sunny, 21 °C. 2 + 3 = 5.'

const weather: Readonly<Record<string, string>> = {
  Paris: 'sunny, 21 °C',
  London: 'cloudy, 15 °C',
  Tokyo: 'rain, 18 °C',
}

/** `get_weather({ city })`: answers from a fixed table. */
export const getWeatherTool = defineTool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  input: z.object({ city: z.string().min(1) }),
  isConcurrencySafe: () => true,
  execute: ({ city }) => `${city}: ${weather[city] ?? 'no report'}`,
})

/** `add({ a, b })`. */
export const addTool = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  isConcurrencySafe: () => true,
  execute: ({ a, b }) => String(a + b),
})

/**
 * The scripted model of one run: step 1 calls both tools, step 2 answers. Call ids depend on
 * the request's length, so they stay unique when a later run resumes the session.
 *
 * @returns a fresh scripted model with two entries
 */
export function scriptedDemoModel(): ModelAdapter {
  const callBoth = (request: ModelRequest): ScriptedReply => ({
    toolCalls: [
      { id: `weather_${request.messages.length}`, name: 'get_weather', arguments: { city: 'Paris' } },
      { id: `add_${request.messages.length}`, name: 'add', arguments: { a: 2, b: 3 } },
    ],
    usage: { inputTokens: 42, outputTokens: 18 },
  })
  const answer: ScriptedReply = { text: demoAnswer, usage: { inputTokens: 71, outputTokens: 12 }, chunkSize: 6 }
  return scriptedModel([callBoth, answer])
}

/**
 * The main job's model: the scripted one, or DeepSeek when `DEEPSEEK_API_KEY` is set, honouring
 * `DEEPSEEK_BASE_URL` (any OpenAI-compatible endpoint) and `DEEPSEEK_MODEL` (default
 * `deepseek-v4-flash`).
 *
 * @param env - the environment
 * @returns an adapter or a route
 */
export function demoModel(env: Readonly<Record<string, string | undefined>>): ModelAdapter | ModelRoute {
  const apiKey = env['DEEPSEEK_API_KEY']
  if (apiKey === undefined || apiKey === '') return scriptedDemoModel()
  const baseURL = env['DEEPSEEK_BASE_URL']
  const adapter = deepseek({ apiKey, ...(baseURL === undefined || baseURL === '' ? {} : { baseURL }) })
  const model = env['DEEPSEEK_MODEL']
  return { adapter, model: model === undefined || model === '' ? 'deepseek-v4-flash' : model }
}
