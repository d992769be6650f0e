/**
 * A child process for the SQLite lease test: at a given instant it opens a harness over a database
 * file and creates one agent with a given session id, then prints what happened as one JSON line
 * and exits.
 *
 * Arguments: a JSON `{ path, id, startAt }` (`startAt` in epoch ms, so two children race). Each
 * child leaves a `<path>-<id>-<pid>.done` marker after its attempt, and a winner keeps the lease
 * until both attempts are done, so a slow-starting rival still meets a live holder.
 */
import { readdir, writeFile } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { createHarness, SessionLockedError } from 'yoke'
import { sqlitePersistence } from '../../src/sqlite/sqlite-persistence.js'

const { path, id, startAt } = JSON.parse(process.argv[2] ?? '{}') as { path: string; id: string; startAt: number }
const persistence = sqlitePersistence({ path })
const harness = await createHarness({ persistence })
const marker = `${basename(path)}-${id}-`
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function bothDone(): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const done = (await readdir(dirname(path))).filter((name) => name.startsWith(marker) && name.endsWith('.done'))
    if (done.length >= 2) return
    await pause(50)
  }
}

await pause(Math.max(0, startAt - Date.now()))
try {
  const agent = await harness.createAgent({ sessionId: id })
  const lease = await persistence.inspectLease?.(id)
  process.stdout.write(`${JSON.stringify({ won: true, owner: lease?.holder.owner })}\n`)
  await writeFile(`${path}-${id}-${process.pid}.done`, '')
  await bothDone()
  await agent.dispose()
} catch (error) {
  const holder = SessionLockedError.is(error) ? error.holder : undefined
  process.stdout.write(
    `${JSON.stringify({ won: false, code: (error as { code?: string }).code, holderOwner: holder?.owner })}\n`,
  )
  await writeFile(`${path}-${id}-${process.pid}.done`, '')
}
await harness.close()
