/**
 * A worker process of the chaos test: a `createWorker` over the test's schema whose model answers
 * every user message, half the time through a tool call, each answer and tool body after a short
 * random pause so that a kill lands mid-turn, and its clock (`Date.now`) off by `skewMs` as on a
 * machine whose clock drifted. Prints `ready` once started; drains and exits on
 * SIGTERM. Argument: a JSON {@link ChaosWorkerOptions}.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { defineTool, type ModelRequest } from '../../src/index.js'
import { createWorker, postgresPersistence } from '../../src/postgres/index.js'
import { type ScriptedReply, scriptedModel, text, tool } from '../../src/testing/index.js'

/** What the test passes. */
export interface ChaosWorkerOptions {
  readonly connectionString: string
  readonly schema: string
  readonly name: string
  readonly lease: { readonly ttlMs: number; readonly heartbeatMs: number }
  /** How far this machine's clock is off (`Date.now`), in ms: leases must not care. */
  readonly skewMs: number
}

const options = JSON.parse(process.argv[2] ?? '{}') as ChaosWorkerOptions
if (options.skewMs !== 0) {
  const realNow = Date.now.bind(Date)
  Date.now = () => realNow() + options.skewMs
}
const pause = (low: number, high: number): Promise<void> => sleep(low + Math.floor(Math.random() * (high - low)))

async function answer(request: ModelRequest): Promise<ScriptedReply> {
  await pause(2, 25)
  const last = request.messages.at(-1)
  if (last?.role !== 'user') return text('done')
  const said = last.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  return Math.random() < 0.5 ? tool('note', { said }) : text(`ack ${said}`)
}

const note = defineTool({
  name: 'note',
  description: 'Notes what the user said',
  input: z.object({ said: z.string() }),
  async execute({ said }) {
    await pause(5, 30)
    return `noted ${said}`
  },
})

const worker = await createWorker({
  id: options.name,
  model: scriptedModel(Array.from({ length: 50_000 }, () => answer)),
  tools: [note],
  persistence: postgresPersistence({
    connectionString: options.connectionString,
    schema: options.schema,
    lease: options.lease,
  }),
  concurrency: 8,
  pollMs: 300,
  sweepMs: 500,
  // Failures the worker survives (a lease lost to a takeover after a freeze) are expected here.
  onError: () => {},
  logger: { debug() {}, info() {}, warn() {}, error() {} },
})
process.stdout.write('ready\n')
process.once('SIGTERM', () => {
  void worker.close({ drainMs: 2_000 }).then(
    () => process.exit(0),
    () => process.exit(1),
  )
})
