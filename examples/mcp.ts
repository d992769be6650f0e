/**
 * MCP tools in an agent (docs/mcp.md): `mcpPlugin` starts the reference server
 * `@modelcontextprotocol/server-everything` over stdio, lists its tools and registers them; the
 * model calls two of them in one turn and answers from their results; closing the harness ends the
 * server's process.
 *
 * The model is the scripted one (no network) unless `DEEPSEEK_API_KEY` is set; then it is DeepSeek
 * (`DEEPSEEK_BASE_URL` and `DEEPSEEK_MODEL` may point it elsewhere), asked the same question.
 *
 * Prints how many tools were mounted and how each is scheduled, every tool result the model got,
 * the progress the long call reported live, and the answer.
 *
 * Run: `npm run example -- mcp`
 */
import { createRequire } from 'node:module'
import { createHarness, deepseek, type ModelAdapter, type ModelRequest, type ModelRoute } from 'yoke'
import { mcpPlugin, mcpServer } from 'yoke/mcp'
import { scriptedModel } from 'yoke/testing'

/** The text of every tool result in a request, in order. */
function toolResults(request: ModelRequest): string[] {
  return request.messages.flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === 'tool-result'
        ? [block.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('')]
        : [],
    ),
  )
}

/** Calls get-sum and the long-running operation together, then answers from what they returned. */
function scriptedDemo(): ModelAdapter {
  return scriptedModel([
    {
      toolCalls: [
        { id: 'call_sum', name: 'get-sum', arguments: '{"a":2,"b":40}' },
        { id: 'call_long', name: 'trigger-long-running-operation', arguments: '{"duration":0.5,"steps":5}' },
      ],
    },
    (request) => ({ text: `The server says: ${toolResults(request).join(' / ')}` }),
  ])
}

/** The scripted model, or DeepSeek when `DEEPSEEK_API_KEY` is set. */
function modelFromEnvironment(): ModelAdapter | ModelRoute {
  const apiKey = process.env['DEEPSEEK_API_KEY']
  if (apiKey === undefined || apiKey === '') return scriptedDemo()
  const baseURL = process.env['DEEPSEEK_BASE_URL']
  const adapter = deepseek({ apiKey, ...(baseURL === undefined || baseURL === '' ? {} : { baseURL }) })
  const name = process.env['DEEPSEEK_MODEL']
  return { adapter, model: name === undefined || name === '' ? 'deepseek-v4-flash' : name }
}

// In your project: `command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything']`.
// Here the installed copy is started with this Node, so the example runs offline.
const everything = mcpServer({
  name: 'everything',
  command: process.execPath,
  args: [createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  // Only what is passed here reaches the server: none of this process's environment does.
  env: { GREETING: 'hello from the parent' },
})

const harness = await createHarness({
  model: modelFromEnvironment(),
  plugins: [
    mcpPlugin({
      servers: [everything],
      onMounted: (mounted) => {
        const parallel = mounted.filter((tool) => tool.mode === 'parallel').length
        console.log(`mounted ${mounted.length} tools (${parallel} may run side by side)`)
      },
    }),
  ],
})
let progressEvents = 0
// Progress notifications arrive as live tools/progress events (coalesced; never in the log).
harness.on('tools/progress', () => {
  progressEvents++
})
harness.on('tools/result', ({ call, result }) => {
  const text = result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('')
  console.log(`${call.name} → ${text}`)
})
try {
  const agent = await harness.createAgent()
  const result = await agent.run(
    'Add 2 and 40 with get-sum, run trigger-long-running-operation for half a second, then tell me what both said.',
  )
  console.log(`progress events: ${progressEvents > 0 ? 'some' : 'none'}`)
  console.log(result.text)
  if (result.reason.kind !== 'completed') process.exitCode = 1
} finally {
  // Ends the server's process too.
  await harness.close()
}
