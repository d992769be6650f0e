/**
 * An AI SDK provider package as a Yoke model: `@ai-sdk/openai-compatible` wrapped with
 * `aiSdkModel` from `yoke/ai-sdk`, an agent with one tool, one turn. Any provider package
 * (`@ai-sdk/anthropic`, `@ai-sdk/google`, `@ai-sdk/amazon-bedrock`, …) plugs in the same way.
 *
 * Without `OPENAI_API_KEY` the provider talks to Yoke's mock OpenAI-compatible server (from
 * `yoke/testing`) on loopback, so this runs offline and prints the same answer every time. With
 * it, it talks to `OPENAI_BASE_URL` (default `https://api.openai.com/v1`) and `OPENAI_MODEL`
 * (default `gpt-4o-mini`).
 *
 * Run: `npm run example -- ai-sdk`
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { z } from 'zod'
import { createHarness, defineTool } from 'yoke'
import { aiSdkMessageState, aiSdkModel } from 'yoke/ai-sdk'
import { startMockOpenAIServer } from 'yoke/testing'

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: z.object({ city: z.string().min(1) }),
  execute: ({ city }) => (city === 'Paris' ? 'Paris: 18°C, light rain' : `no forecast for ${city}`),
})

// 1. The provider: a real endpoint when a key is set, else the mock server answering a script
//    (first a call of the tool, then an answer from its result).
const apiKey = process.env['OPENAI_API_KEY'] ?? ''
const mock =
  apiKey === ''
    ? await startMockOpenAIServer({
        script: [
          { toolCalls: [{ id: 'call-1', name: 'get_weather', arguments: { city: 'Paris' } }] },
          { text: 'It is 18°C with light rain in Paris.' },
        ],
      })
    : undefined
const provider = createOpenAICompatible({
  name: 'openai',
  baseURL: mock?.baseURL ?? process.env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
  apiKey: mock === undefined ? apiKey : 'mock-key',
  includeUsage: true,
})

// 2. The AI SDK language model becomes the harness's model; tools, persistence and the loop are Yoke's.
const harness = await createHarness({
  model: aiSdkModel(provider(process.env['OPENAI_MODEL'] ?? 'gpt-4o-mini')),
  tools: [getWeather],
  instructions: 'You answer weather questions with the get_weather tool.',
})
const agent = await harness.createAgent()
const result = await agent.run('What is the weather in Paris?')
console.log(result.text)

// 3. What the provider reported beside the content (response id, warnings, sources) is in the log.
const answers = result.messages.filter((message) => message.role === 'assistant')
const last = answers.at(-1)
const state = last?.role === 'assistant' ? aiSdkMessageState(last) : undefined
const tools = agent.session.events.filter((event) => event.type === 'tool/call').length
console.log(
  `turn ${result.turn} ${result.reason.kind} · ${tools} tool call · response id logged: ${state?.response?.['id'] !== undefined}`,
)

await harness.close()
await mock?.close()
if (result.reason.kind !== 'completed') process.exitCode = 1
