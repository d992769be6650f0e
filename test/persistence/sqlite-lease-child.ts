/**
 * A child process for the SQLite lease test: at a given instant it opens a harness over a database
 * file and creates one agent with a given session id, then prints what happened as one JSON line
 * and exits.
 *
 * Arguments: a JSON `{ path, id, startAt }` (`startAt` in epoch ms, so two children race).
 */
import { createHarness, SessionLockedError } from 'yoke'
import { sqlitePersistence } from '../../src/sqlite/sqlite-persistence.js'

const { path, id, startAt } = JSON.parse(process.argv[2] ?? '{}') as { path: string; id: string; startAt: number }
const persistence = sqlitePersistence({ path })
const harness = await createHarness({ persistence })
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())))
try {
  const agent = await harness.createAgent({ sessionId: id })
  const lease = await persistence.inspectLease?.(id)
  process.stdout.write(`${JSON.stringify({ won: true, owner: lease?.holder.owner })}\n`)
  // Hold the lease a moment, so the loser's error is about a live holder.
  await new Promise((resolve) => setTimeout(resolve, 300))
  await agent.dispose()
} catch (error) {
  const holder = SessionLockedError.is(error) ? error.holder : undefined
  process.stdout.write(
    `${JSON.stringify({ won: false, code: (error as { code?: string }).code, holderOwner: holder?.owner })}\n`,
  )
}
await harness.close()
