/**
 * The PostgreSQL crash child (bundled; run as `node entry.mjs '<options JSON>'`): a harness over
 * `postgresPersistence` with a tiny write-behind window, one seeded producer loop per session, and
 * `sessions.flush` at random points. After each flush resolves it writes
 * `{"session","acked","digest"}` + `\n` to fd 3: `acked` and every seq before it are committed, and
 * `digest` is the digest of those events. It runs until the parent kills it.
 *
 * @module
 */
import { writeSync } from 'node:fs'
import { createHarness, type Logger, type Session } from '../../../src/index.js'
import { postgresPersistence } from '../../../src/postgres/index.js'
import { between, deriveSeed, logDigest, mulberry32, sessionIdsOf, TurnProducer } from './workload.js'

/** What the parent passes. */
export interface PostgresChildOptions {
  readonly connectionString: string
  readonly schema: string
  readonly seed: number
  readonly run: number
  readonly sessions: number
  readonly windowMs: number
}

const options = JSON.parse(process.argv[2] ?? '{}') as PostgresChildOptions
const ackFd = 3

const stderr = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) => {
  process.stderr.write(
    `[child ${level}] ${message}${fields === undefined ? '' : ` ${JSON.stringify(fields, (_key, value: unknown) => (value instanceof Error ? String(value) : value))}`}\n`,
  )
}
const logger: Logger = { debug: () => {}, info: () => {}, warn: stderr('warn'), error: stderr('error') }

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const turnOfLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

const harness = await createHarness({
  persistence: postgresPersistence({ connectionString: options.connectionString, schema: options.schema }),
  writeBehind: { windowMs: options.windowMs },
  logger,
})

function ack(session: Session, digest: string): void {
  writeSync(ackFd, `${JSON.stringify({ session: session.id, acked: session.length - 1, digest })}\n`)
}

async function produce(id: string, index: number): Promise<never> {
  const random = mulberry32(deriveSeed(options.seed, options.run, index))
  const producer = new TurnProducer(random)
  const session = harness.sessions.create({ id })
  const digest = logDigest()
  for (;;) {
    const planned = producer.next(session.length)
    const event = session.append(planned.type, planned.data, planned.options)
    digest.update(`${JSON.stringify(event)}\n`)
    const roll = random()
    if (roll < 0.08) {
      // Nothing of this session is appended while its flush runs, so the flush covers all of it.
      await harness.sessions.flush(session)
      ack(session, digest.copy().digest('hex'))
    } else if (roll < 0.3) await turnOfLoop()
    else if (roll < 0.36) await pause(between(random, 0, 4))
  }
}

await Promise.all(sessionIdsOf(options.run, options.sessions).map((id, index) => produce(id, index)))
