/**
 * A worker process of the scale-out bench: `createWorker` over the bench's schema with a model
 * that waits `stepMs` and answers `ok` (one step per turn), driving at most `concurrency` sessions.
 * Prints `ready` once started; drains and exits on SIGTERM. Argument: a JSON {@link BenchWorkerOptions}.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createWorker, postgresPersistence } from 'yoke/postgres'
import { scriptedModel, text } from 'yoke/testing'

/** What the bench passes. */
export interface BenchWorkerOptions {
  readonly connectionString: string
  readonly schema: string
  readonly concurrency: number
  readonly stepMs: number
}

const options = JSON.parse(process.argv[2] ?? '{}') as BenchWorkerOptions
const answer = async () => {
  await sleep(options.stepMs)
  return text('ok')
}
const worker = await createWorker({
  model: scriptedModel(Array.from({ length: 100_000 }, () => answer)),
  persistence: postgresPersistence({ connectionString: options.connectionString, schema: options.schema }),
  concurrency: options.concurrency,
  logger: { debug() {}, info() {}, warn() {}, error: (message) => console.error(message) },
})
process.stdout.write('ready\n')
process.once('SIGTERM', () => {
  void worker.close({ drainMs: 1_000 }).then(
    () => process.exit(0),
    () => process.exit(1),
  )
})
