/**
 * The writer of the tail tests, in a process of its own: it opens one session over a PostgreSQL
 * schema through `postgresPersistence` and runs turns of a scripted model when told to, so the
 * test process tails appends made by another process.
 *
 * Argument: a JSON {@link TailWriterOptions}. Stdin: one command per line, `turns <n>` (run n
 * turns, one after the other) or `exit`. Stdout: one JSON line per event of note:
 * `{ "ready": length }` once the session is open, `{ "turn": i, "length": n }` after each turn.
 */
import { createInterface } from 'node:readline'
import { createHarness } from '../../src/index.js'
import { postgresPersistence } from '../../src/postgres/index.js'
import { scriptedModel, text } from '../../src/testing/index.js'

/** What the parent passes. */
export interface TailWriterOptions {
  readonly connectionString: string
  readonly schema: string
  readonly sessionId: string
  /** Whether appends send notifications (the adapter's `notify`). */
  readonly notify?: boolean
  /** Characters per streamed chunk of the replies (small: many chunk events per turn). */
  readonly chunkSize?: number
}

const options = JSON.parse(process.argv[2] ?? '{}') as TailWriterOptions
const replies = Array.from({ length: 500 }, (_, index) =>
  text(`reply ${index}: the quick brown fox jumps over the lazy dog`, { chunkSize: options.chunkSize ?? 8 }),
)
const harness = await createHarness({
  model: scriptedModel(replies),
  persistence: postgresPersistence({
    connectionString: options.connectionString,
    schema: options.schema,
    ...(options.notify === undefined ? {} : { notify: options.notify }),
  }),
})
const agent = await harness.openAgent(options.sessionId)
const say = (line: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`)
}
say({ ready: agent.session.length })
let turn = 0
for await (const line of createInterface({ input: process.stdin })) {
  const [command, count] = line.trim().split(' ')
  if (command === 'exit') break
  if (command === 'turns') {
    for (let index = 0; index < Number(count); index++) {
      turn++
      await agent.run(`message ${turn}`)
      say({ turn, length: agent.session.length })
    }
  }
}
await agent.dispose()
await harness.close()
say({ closed: true })
