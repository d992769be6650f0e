/**
 * `npm start` — the main job: an agent with two tools over the JSONL session
 * `readme-demo` in `./sessions`, asked about the weather in Paris and 2 + 3.
 *
 * The model is the scripted one (no network) unless `DEEPSEEK_API_KEY` is set; then it is the
 * DeepSeek adapter, honouring `DEEPSEEK_BASE_URL` (any OpenAI-compatible endpoint) and
 * `DEEPSEEK_MODEL` (default `deepseek-v4-flash`). `openAgent` resumes the session when it exists, so every run is the next turn.
 * Before the transcript it says which: a new session or a resumed one (and the turn this run is),
 * which model answers, and where the log is.
 *
 * Options: `--dir <directory>` (default `./sessions`).
 *
 * `npm start` runs this file with tsx against the source (`yoke` mapped to `src/` by
 * tsconfig.test.json's paths), so it starts without a build.
 *
 * `yoke demo` (src/cli/demo-command.ts) is the shipped copy of this job: the bin cannot import an
 * example, and this file must show the public API. test/cli/demo.test.ts checks that both print
 * the same transcript, so keep them in step.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import {
  createHarness,
  deepseek,
  defineTool,
  type ModelAdapter,
  type ModelRequest,
  type ModelRoute,
  type ToolResultData,
} from 'yoke'
import { type ScriptedReply, scriptedModel } from 'yoke/testing'

const sessionId = 'readme-demo'
const question = 'What is the weather in Paris, and what is 2 + 3?'

const weather: Readonly<Record<string, string>> = {
  Paris: 'sunny, 21 °C',
  London: 'cloudy, 15 °C',
  Tokyo: 'rain, 18 °C',
}

const getWeather = defineTool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  input: z.object({ city: z.string().min(1) }),
  isConcurrencySafe: () => true,
  execute: ({ city }) => `${city}: ${weather[city] ?? 'no report'}`,
})

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  isConcurrencySafe: () => true,
  execute: ({ a, b }) => String(a + b),
})

/** Step 1 calls both tools; step 2 answers. Call ids are unique per request, so reruns stay valid. */
function scriptedDemo(): ModelAdapter {
  const callBoth = (request: ModelRequest): ScriptedReply => ({
    toolCalls: [
      { id: `weather_${request.messages.length}`, name: 'get_weather', arguments: { city: 'Paris' } },
      { id: `add_${request.messages.length}`, name: 'add', arguments: { a: 2, b: 3 } },
    ],
    usage: { inputTokens: 42, outputTokens: 18 },
  })
  const answer: ScriptedReply = {
    text: 'Paris: sunny, 21 °C. 2 + 3 = 5.',
    usage: { inputTokens: 71, outputTokens: 12 },
    chunkSize: 6,
  }
  // Two entries per run of this process (one turn); the script is rebuilt each run.
  return scriptedModel([callBoth, answer])
}

/** The scripted model, or DeepSeek (any OpenAI-compatible endpoint) when `DEEPSEEK_API_KEY` is set; and its name. */
function modelFromEnvironment(): { readonly model: ModelAdapter | ModelRoute; readonly describe: string } {
  const apiKey = process.env['DEEPSEEK_API_KEY']
  if (apiKey === undefined || apiKey === '')
    return { model: scriptedDemo(), describe: 'scripted (no network; set DEEPSEEK_API_KEY to use DeepSeek)' }
  const baseURL = process.env['DEEPSEEK_BASE_URL']
  const adapter = deepseek({ apiKey, ...(baseURL === undefined || baseURL === '' ? {} : { baseURL }) })
  const name = process.env['DEEPSEEK_MODEL']
  const model = name === undefined || name === '' ? 'deepseek-v4-flash' : name
  return { model: { adapter, model }, describe: `DeepSeek ${model}` }
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name)
  return index === -1 ? undefined : process.argv[index + 1]
}

function resultText(data: ToolResultData): string {
  const block = data.message.content[0]
  if (block?.type !== 'tool-result') return ''
  return block.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('')
}

const dir = argument('--dir') ?? 'sessions'
const file = join(dir, `${sessionId}.jsonl`)
const { model, describe } = modelFromEnvironment()
// Looked at before the harness opens it: openAgent resumes a session whose log exists, else creates it.
const resumed = existsSync(file)
const harness = await createHarness({ model, persistence: { dir }, tools: [getWeather, add] })
let exitCode = 0
try {
  const agent = await harness.openAgent(sessionId)
  const turn = agent.session.events.filter((event) => event.type === 'turn/start').length + 1
  console.log(`session ${sessionId}: ${resumed ? 'resumed' : 'new'}, turn ${turn} · log ${file}`)
  console.log(`model: ${describe}`)
  const run = agent.stream(question)
  let steps = 0
  let calls = 0
  let midLine = false
  for await (const event of run) {
    if (event.type === 'step/start') steps++
    else if (event.type === 'assistant/chunk') {
      const { chunk } = event.data
      if (chunk.type === 'text-delta') {
        process.stdout.write(chunk.text)
        midLine = true
      }
    } else if (event.type === 'tool/call') {
      const data = event.data
      calls++
      if (midLine) process.stdout.write('\n')
      midLine = false
      console.log(`→ ${data.name} ${data.arguments}`)
    } else if (event.type === 'tool/result') {
      console.log(`← ${resultText(event.data)}`)
    }
  }
  if (midLine) process.stdout.write('\n')
  const result = await run.result
  if (result.reason.kind === 'completed') {
    console.log(`turn ${result.turn} completed · ${steps} steps · ${calls} tool calls · ${file}`)
  } else {
    const detail = result.reason.kind === 'error' ? ` ${result.reason.error.code}: ${result.reason.error.message}` : ''
    console.log(`turn ${result.turn} ${result.reason.kind}${detail}`)
    exitCode = 1
  }
} finally {
  await harness.close()
}
process.exitCode = exitCode
