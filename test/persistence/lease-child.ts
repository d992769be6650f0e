/**
 * A child process for the lease tests: at a given instant it opens a harness over a directory and
 * creates one agent with a given session id, then prints what happened as one JSON line and exits.
 *
 * Arguments: a JSON `{ dir, id, startAt }` (`startAt` in epoch ms, so two children race).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createHarness, jsonlPersistence, SessionLockedError } from 'yoke'

const { dir, id, startAt } = JSON.parse(process.argv[2] ?? '{}') as { dir: string; id: string; startAt: number }
const harness = await createHarness({ persistence: jsonlPersistence({ dir }) })
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())))
try {
  const agent = await harness.createAgent({ sessionId: id })
  const lock = JSON.parse(await readFile(join(dir, `${id}.lock`), 'utf8')) as { owner: string }
  process.stdout.write(`${JSON.stringify({ won: true, owner: lock.owner })}\n`)
  // Hold the lease until well after the start instant, so the loser's error is about a live
  // holder even when a busy machine starts the other process late.
  await new Promise((resolve) => setTimeout(resolve, Math.max(300, startAt + 1_500 - Date.now())))
  await agent.dispose()
} catch (error) {
  const holder = SessionLockedError.is(error) ? error.holder : undefined
  process.stdout.write(
    `${JSON.stringify({ won: false, code: (error as { code?: string }).code, holderOwner: holder?.owner })}\n`,
  )
}
await harness.close()
