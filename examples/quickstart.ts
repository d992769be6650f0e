/**
 * Quickstart: the smallest complete program. Build a harness, create an agent,
 * run one turn, print the answer.
 *
 * The model is the scripted one from `yoke/testing`, so this runs offline and always prints the
 * same answer. Swap in a real adapter (`deepseek({ apiKey })`, `openaiCompatible({ … })`) and
 * nothing else changes.
 *
 * Run: `npm run example -- quickstart`
 */
import { createHarness } from 'yoke'
import { scriptedModel, text } from 'yoke/testing'

// 1. The harness owns everything: the model, the tools, persistence (in memory by default here).
//    A scripted model answers each request with the next reply of its script.
const harness = await createHarness({
  model: scriptedModel([text('Hello! I am a Yoke agent.')]),
  instructions: 'You are a friendly assistant.',
})

// 2. An agent is one conversation: a session log plus the loop that drives the model.
const agent = await harness.createAgent()

// 3. `run` sends one user message and resolves when the turn ends. Model failures resolve too
//    (as `reason.kind === 'error'`), so check the reason instead of catching.
const result = await agent.run('Hi, who are you?')
console.log(result.text)
console.log(
  `turn ${result.turn} ${result.reason.kind} · ${result.messages.length} messages · ${agent.session.length} events in the log`,
)

// 4. Closing flushes the logs and stops every timer; always close what you create.
await harness.close()
if (result.reason.kind !== 'completed') process.exitCode = 1
