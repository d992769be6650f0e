/**
 * The harness a log command reads through: the JSONL adapter over one directory, the default
 * catalog (so the cold-read checks run as in any harness), no model.
 *
 * @module
 */
import { createHarness } from '../harness/create-harness.js'
import type { Harness } from '../harness/harness.js'
import { jsonlPersistence } from '../persistence/jsonl/jsonl-persistence.js'

/**
 * Runs `task` with a harness over the JSONL logs in `dir`, closing it afterwards. Creating the
 * harness writes nothing: the directory is touched only by a lease (`repair`).
 *
 * @param dir - the log directory
 * @param task - what to do with the harness
 * @returns what `task` returns
 * @throws what `task` throws (before a close failure), else the close failure
 */
export async function withLogStore<T>(dir: string, task: (harness: Harness) => Promise<T>): Promise<T> {
  const harness = await createHarness({ persistence: jsonlPersistence({ dir }) })
  let result: T
  try {
    result = await task(harness)
  } catch (error) {
    await harness.close().catch(() => undefined)
    throw error
  }
  await harness.close()
  return result
}
