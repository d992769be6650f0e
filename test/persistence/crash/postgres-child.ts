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
import { deriveSeed, mulberry32, produceSession, sessionIdsOf } from './workload.js'

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

const harness = await createHarness({
  persistence: postgresPersistence({ connectionString: options.connectionString, schema: options.schema }),
  writeBehind: { windowMs: options.windowMs },
  logger,
})

function ack(session: Session, digest: string): void {
  writeSync(ackFd, `${JSON.stringify({ session: session.id, acked: session.length - 1, digest })}\n`)
}

await Promise.all(
  sessionIdsOf(options.run, options.sessions).map((id, index) =>
    produceSession(harness, id, mulberry32(deriveSeed(options.seed, options.run, index)), ack),
  ),
)
