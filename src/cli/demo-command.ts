/**
 * `yoke demo [--dir <path>]`: runs the repository's main job against
 * `--dir` (default `./sessions`), streaming the answer and the tool calls to stdout.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createHarness } from '../harness/create-harness.js'
import type { AssistantChunkData, ToolCallData, ToolResultData } from '../session/core-event-types.js'
import type { CliCommand } from './cli-command.js'
import type { CliIo } from './cli-io.js'
import { ExitCode } from './exit-codes.js'
import { addTool, demoModel, demoQuestion, demoSessionId, getWeatherTool } from './demo-job.js'
import { type ParsedCommand, stringFlag } from './parse-command.js'
import { defaultSessionDir } from './session-target.js'

function resultText(data: ToolResultData): string {
  const block = data.message.content[0]
  if (block?.type !== 'tool-result') return ''
  return block.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('')
}

/**
 * Runs the main job once: `openAgent('readme-demo')` (so a rerun is the next turn), one
 * question; first `session readme-demo: <new|resumed>, turn <n> · log <file>` and
 * `model: <name>`, then the streamed answer, `→ <name> <json args>` per call and `← <text>` per result,
 * then `turn <n> completed · <steps> steps · <calls> tool calls · <file>`, or
 * `turn <n> <reason>` (plus ` <code>: <message>` for an error) and exit code 1.
 *
 * @param dir - the log directory
 * @param io - where to write, and the environment (`DEEPSEEK_API_KEY`, …)
 * @returns `0` when the turn completed, else `1`
 * @throws the harness's errors (a locked or unreadable session, …)
 */
export async function runDemo(dir: string, io: CliIo): Promise<number> {
  const file = join(dir, `${demoSessionId}.jsonl`)
  const model = demoModel(io.env)
  const modelName =
    'adapter' in model ? `DeepSeek ${model.model ?? ''}` : 'scripted (no network; set DEEPSEEK_API_KEY to use DeepSeek)'
  // Looked at before the harness opens it: openAgent resumes a session whose log exists, else creates it.
  const resumed = existsSync(file)
  const harness = await createHarness({ model, persistence: { dir }, tools: [getWeatherTool, addTool] })
  let exitCode: number = ExitCode.ok
  try {
    const agent = await harness.openAgent(demoSessionId)
    const turn = agent.session.events.filter((event) => event.type === 'turn/start').length + 1
    io.stdout(`session ${demoSessionId}: ${resumed ? 'resumed' : 'new'}, turn ${turn} · log ${file}\n`)
    io.stdout(`model: ${modelName}\n`)
    const run = agent.stream(demoQuestion)
    let steps = 0
    let calls = 0
    let midLine = false
    for await (const event of run) {
      if (event.type === 'step/start') steps++
      else if (event.type === 'assistant/chunk') {
        const chunk = (event.data as unknown as AssistantChunkData).chunk
        if (chunk.type === 'text-delta') {
          io.stdout(chunk.text)
          midLine = true
        }
      } else if (event.type === 'tool/call') {
        const data = event.data as unknown as ToolCallData
        calls++
        if (midLine) io.stdout('\n')
        midLine = false
        io.stdout(`→ ${data.name} ${data.arguments}\n`)
      } else if (event.type === 'tool/result') {
        io.stdout(`← ${resultText(event.data as unknown as ToolResultData)}\n`)
      }
    }
    if (midLine) io.stdout('\n')
    const result = await run.result
    if (result.reason.kind === 'completed') {
      io.stdout(`turn ${result.turn} completed · ${steps} steps · ${calls} tool calls · ${file}\n`)
    } else {
      const detail =
        result.reason.kind === 'error' ? ` ${result.reason.error.code}: ${result.reason.error.message}` : ''
      io.stdout(`turn ${result.turn} ${result.reason.kind}${detail}\n`)
      exitCode = ExitCode.failure
    }
  } finally {
    await harness.close()
  }
  return exitCode
}

/** `yoke demo`. */
export const demoCommand: CliCommand = {
  grammar: { name: 'demo', flags: { dir: 'string' }, positionals: [] },
  synopsis: 'yoke demo    [--dir <path>]',
  help: [
    'Runs the main job: an agent with get_weather and add over the session readme-demo, asked',
    '"What is the weather in Paris, and what is 2 + 3?". Scripted model unless DEEPSEEK_API_KEY is',
    'set (then DeepSeek, honouring DEEPSEEK_BASE_URL and DEEPSEEK_MODEL). A rerun continues the',
    'session with the next turn.',
    '',
    '  --dir <path>    the log directory (default ./sessions)',
  ].join('\n'),
  run: (parsed: ParsedCommand, io: CliIo) => runDemo(stringFlag(parsed, 'dir') ?? defaultSessionDir, io),
}
