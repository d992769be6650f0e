/**
 * A worker process for the kill tests (bundled; run as `node entry.mjs '<options JSON>'`): a
 * worker over the given schema whose model takes `delayMs` per answer. It prints `ready` once
 * started and runs until it is killed.
 *
 * @module
 */
import { createWorker, postgresPersistence } from '../../src/postgres/index.js'
import { scriptedModel, text } from '../../src/testing/index.js'

/** What the parent passes. */
export interface WorkerChildOptions {
  readonly connectionString: string
  readonly schema: string
  readonly delayMs: number
  readonly ttlMs: number
  readonly heartbeatMs: number
}

const options = JSON.parse(process.argv[2] ?? '{}') as WorkerChildOptions

await createWorker({
  model: scriptedModel(Array.from({ length: 2000 }, () => text('ok', { delayMs: options.delayMs }))),
  persistence: postgresPersistence({
    connectionString: options.connectionString,
    schema: options.schema,
    lease: { ttlMs: options.ttlMs, heartbeatMs: options.heartbeatMs },
  }),
  pollMs: 100,
  onError: (error, sessionId) => process.stderr.write(`[worker child] ${sessionId ?? ''} ${String(error)}\n`),
})
process.stdout.write('ready\n')
