/**
 * A submitter process of the chaos test. First it submits `messages` messages to each of its
 * sessions (one after another within a session with a random pause of `pauseMs` between them,
 * every session at once, so that submits go on while workers die), each with the key
 * `<session>:m<n>`, some a second time right after; prints `submitted`. Then, when the test writes
 * a line to its stdin, it submits `duplicates` keys again (any session, any submitter's), each of
 * which must come back as a duplicate, and prints a JSON summary.
 * Argument: a JSON {@link ChaosSubmitterOptions}.
 */
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { createPostgresClient } from '../../src/postgres/index.js'

/** What the test passes. */
export interface ChaosSubmitterOptions {
  readonly connectionString: string
  readonly schema: string
  readonly sessions: readonly string[]
  readonly messages: number
  /** The pause between two messages of one session: from `pauseMs[0]` to `pauseMs[1]` ms. */
  readonly pauseMs: readonly [number, number]
  /** Keys (`<session>:m<n>`) to submit again in the second phase. */
  readonly duplicates: readonly string[]
}

/** The summary line. */
export interface ChaosSubmitterSummary {
  readonly submitted: number
  readonly repeatedAtOnce: number
  readonly repeatedLater: number
  /** Repeats that did not come back as duplicates of the first message (must be 0). */
  readonly wrong: readonly string[]
}

const options = JSON.parse(process.argv[2] ?? '{}') as ChaosSubmitterOptions
const client = createPostgresClient({ connectionString: options.connectionString, schema: options.schema })
const firstIds = new Map<string, string>()
const wrong: string[] = []
let repeatedAtOnce = 0

await Promise.all(
  options.sessions.map(async (session) => {
    for (let index = 0; index < options.messages; index++) {
      const [low, high] = options.pauseMs
      await sleep(low + Math.floor(Math.random() * (high - low)))
      const key = `${session}:m${index}`
      const first = await client.submit(session, key, { idempotencyKey: key, create: true })
      firstIds.set(key, first.messageId)
      if (first.duplicate) wrong.push(`${key}: the first submit was a duplicate`)
      if (Math.random() < 0.2) {
        repeatedAtOnce++
        const again = await client.submit(session, key, { idempotencyKey: key, create: true })
        if (!again.duplicate || again.messageId !== first.messageId)
          wrong.push(`${key}: a repeat made ${again.messageId}`)
      }
    }
  }),
)
process.stdout.write('submitted\n')

const lines = createInterface({ input: process.stdin })
await new Promise((resolve) => lines.once('line', resolve))
await Promise.all(
  options.duplicates.map(async (key) => {
    const session = key.slice(0, key.lastIndexOf(':'))
    const again = await client.submit(session, key, { idempotencyKey: key })
    const known = firstIds.get(key)
    if (!again.duplicate || (known !== undefined && again.messageId !== known))
      wrong.push(`${key}: a later repeat made ${again.messageId}`)
  }),
)
const summary: ChaosSubmitterSummary = {
  submitted: firstIds.size,
  repeatedAtOnce,
  repeatedLater: options.duplicates.length,
  wrong,
}
process.stdout.write(`${JSON.stringify(summary)}\n`)
lines.close()
await client.close()
