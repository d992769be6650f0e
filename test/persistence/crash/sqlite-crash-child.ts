/**
 * The SQLite crash child (bundled; argument: a JSON `{ path, seed, run, sessions, windowMs }`): a
 * harness over `sqlitePersistence({ path })` with a tiny write-behind window and one seeded
 * producer per session. After each flush resolves it writes `{"session","acked","digest"}` + `\n`
 * to fd 3. It runs until the parent kills it.
 *
 * @module
 */
import { writeSync } from 'node:fs'
import { createHarness, type Session } from '../../../src/index.js'
import { sqlitePersistence } from '../../../src/sqlite/sqlite-persistence.js'
import { deriveSeed, mulberry32, produceSession, sessionIdsOf } from './workload.js'

const options = JSON.parse(process.argv[2] ?? '{}') as {
  readonly path: string
  readonly seed: number
  readonly run: number
  readonly sessions: number
  readonly windowMs: number
}

const harness = await createHarness({
  persistence: sqlitePersistence({ path: options.path }),
  writeBehind: { windowMs: options.windowMs },
})

function ack(session: Session, digest: string): void {
  writeSync(3, `${JSON.stringify({ session: session.id, acked: session.length - 1, digest })}\n`)
}

await Promise.all(
  sessionIdsOf(options.run, options.sessions).map((id, index) =>
    produceSession(harness, id, mulberry32(deriveSeed(options.seed, options.run, index)), ack),
  ),
)
