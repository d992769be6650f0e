/**
 * A child process that holds the JSONL lease of one session and appends a batch every 50 ms,
 * printing one JSON line per append, until a write fails: then it prints the error and exits.
 * The lease and CLI tests break its lease from another process (or SIGKILL it to leave its lock).
 *
 * Arguments: a JSON `{ dir, id, ttlMs?, heartbeatMs? }` (the adapter's defaults when absent).
 */
import { jsonlPersistence, LeaseLostError } from 'yoke'
import { baseLog, eventsFrom, headerOf, turnStart } from '../../src/testing/conformance/conformance-events.js'

const { dir, id, ttlMs, heartbeatMs } = JSON.parse(process.argv[2] ?? '{}') as {
  dir: string
  id: string
  ttlMs?: number
  heartbeatMs?: number
}
const lease = ttlMs === undefined || heartbeatMs === undefined ? {} : { lease: { ttlMs, heartbeatMs } }
const adapter = jsonlPersistence({ dir, ...lease })
await adapter.create(headerOf(id))
const held = await adapter.acquire(id)
let next = 0
const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`)
try {
  const log = baseLog()
  await adapter.append(id, log, { expectedSeq: 0, lease: held })
  next = log.length
  print({ appended: next, owner: held.owner, epoch: held.epoch, pid: process.pid })
  for (let turn = 2; ; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    await adapter.append(id, eventsFrom(next, [turnStart(turn)]), { expectedSeq: next, lease: held })
    next += 1
    print({ appended: next })
  }
} catch (error) {
  print({
    error: (error as { code?: string }).code,
    lost: LeaseLostError.is(error),
    message: (error as Error).message,
    signalAborted: held.signal.aborted,
  })
}
await adapter.close().catch(() => undefined)
