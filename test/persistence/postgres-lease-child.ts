/**
 * A child process for the PostgreSQL lease tests: at a given instant it opens a harness over a
 * schema and opens one agent with a given session id, prints what happened as one JSON line, holds
 * the lease for `holdMs`, and exits. With `skewMs` its own clock (`Date.now`) is off by that much,
 * as on a machine whose clock drifted.
 *
 * Argument: a JSON {@link LeaseChildOptions}.
 */
import { createHarness, SessionLockedError } from '../../src/index.js'
import { postgresPersistence } from '../../src/postgres/index.js'

/** What the parent passes. */
export interface LeaseChildOptions {
  readonly connectionString: string
  readonly schema: string
  readonly id: string
  /** When to open the agent, epoch ms of the parent's clock (so two children race). */
  readonly startAt: number
  readonly holdMs: number
  readonly skewMs?: number
  readonly lease?: { readonly ttlMs: number; readonly heartbeatMs: number }
}

const options = JSON.parse(process.argv[2] ?? '{}') as LeaseChildOptions
const realNow = Date.now.bind(Date)
const startAt = options.startAt
if (options.skewMs !== undefined) {
  const skew = options.skewMs
  Date.now = () => realNow() + skew
}
const adapter = postgresPersistence({
  connectionString: options.connectionString,
  schema: options.schema,
  ...(options.lease === undefined ? {} : { lease: options.lease }),
})
const harness = await createHarness({ persistence: adapter })
// Connected and migrated before the race, so the race is about the lease alone.
await adapter.list()
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - realNow())))
try {
  const agent = await harness.openAgent(options.id)
  const lease = await adapter.inspectLease?.(options.id)
  process.stdout.write(`${JSON.stringify({ won: true, owner: lease?.holder.owner })}\n`)
  await new Promise((resolve) => setTimeout(resolve, options.holdMs))
  await agent.dispose()
} catch (error) {
  const holder = SessionLockedError.is(error) ? error.holder : undefined
  process.stdout.write(
    `${JSON.stringify({ won: false, code: (error as { code?: string }).code, message: String(error), holderOwner: holder?.owner })}\n`,
  )
}
await harness.close()
