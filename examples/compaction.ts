/**
 * The compaction guide's example (docs/compaction.md): a small context window, a long
 * conversation, and the default `compaction` entry keeping it inside the window. Pressure
 * summarizes the oldest turns before a step (with the scripted model answering the summary
 * request, purpose `compaction`), then `agent.compact()` condenses more between turns.
 *
 * Prints each `compaction/*` event, the texts the model sees afterwards and the request purposes.
 *
 * Run: `npm run example -- compaction`
 */
import { basicCompaction, createHarness, type ModelRequest } from 'yoke'
import { fakeIds, scriptedModel, text } from 'yoke/testing'

const filler = (label: string): string => `${label}: ${'lorem ipsum '.repeat(30)}`.trim()

// The scripted model: three answers, the summary the pressure trigger asks for, one more answer,
// then the summary of the manual compaction.
const model = scriptedModel(
  [
    text(filler('answer 1')),
    text(filler('answer 2'), { usage: { inputTokens: 700, outputTokens: 90 } }),
    text('The user asked two questions about lorem ipsum; both were answered.'),
    text(filler('answer 3')),
    text(filler('answer 4')),
    text('Four questions about lorem ipsum were asked and answered.'),
  ],
  { info: { contextWindow: 1000 } },
)
const harness = await createHarness({
  model,
  ids: fakeIds(),
  patches: [basicCompaction({ threshold: 0.8, keepRecentTurns: 2 })],
})
const agent = await harness.createAgent()
harness.on('agent/compaction', (payload) =>
  console.log(`agent/compaction: ${payload.outcome} ${payload.reason ?? payload.error?.code ?? ''}`.trim()),
)

for (let question = 1; question <= 4; question++) await agent.run(filler(`question ${question}`))
const action = await agent.compact()

for (const event of agent.session.events.filter((event) => event.type.startsWith('compaction/'))) {
  const { compactionId, trigger, summary, shadowedSeqs } = event.data as {
    compactionId: string
    trigger?: string
    summary?: string
    shadowedSeqs?: number[]
  }
  console.log(
    `${event.type} ${compactionId}${trigger === undefined ? '' : ` ${trigger}`}${summary === undefined ? '' : ` shadows ${shadowedSeqs?.length} nodes`}`,
  )
}
const preview = (value: string): string => (value.length > 40 ? `${value.slice(0, 40)}…` : value)
const texts = agent.session
  .deriveMessages()
  .map((message) => (message.content[0]?.type === 'text' ? preview(message.content[0].text) : message.content[0]?.type))
console.log(`model history: ${JSON.stringify(texts)}`)
console.log(
  `manual action: ${action?.compactionId} replaced ${action?.shadowedSeqs.length} nodes (${action?.shadowedTokens} → ${action?.summaryTokens} tokens)`,
)
console.log(`request purposes: ${model.requests.map((request: ModelRequest) => request.metadata.purpose).join(', ')}`)
model.assertComplete()
await harness.close()
