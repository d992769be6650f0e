/**
 * A child process for the frozen-writer test: it holds a short lease on one session and appends a
 * batch every 50 ms, printing one JSON line per append. After the parent froze it (SIGSTOP) past
 * its TTL and took the session over, the next append must fail: it prints the error and exits.
 *
 * Arguments: a JSON `{ dir, id, ttlMs, heartbeatMs }`.
 */
import { jsonlPersistence, LeaseLostError } from 'yoke'
import { baseLog, eventsFrom, headerOf, turnStart } from '../../src/testing/conformance/conformance-events.js'

const { dir, id, ttlMs, heartbeatMs } = JSON.parse(process.argv[2] ?? '{}') as {
  dir: string
  id: string
  ttlMs: number
  heartbeatMs: number
}
const adapter = jsonlPersistence({ dir, lease: { ttlMs, heartbeatMs } })
await adapter.create(headerOf(id))
const lease = await adapter.acquire(id)
let next = 0
const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`)
try {
  const log = baseLog()
  await adapter.append(id, log, { expectedSeq: 0, lease })
  next = log.length
  print({ appended: next, owner: lease.owner })
  for (let turn = 2; ; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    await adapter.append(id, eventsFrom(next, [turnStart(turn)]), { expectedSeq: next, lease })
    next += 1
    print({ appended: next })
  }
} catch (error) {
  print({
    error: (error as { code?: string }).code,
    lost: LeaseLostError.is(error),
    holderOwner: LeaseLostError.is(error) ? error.holder?.owner : undefined,
  })
}
await adapter.close().catch(() => undefined)
