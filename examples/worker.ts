/**
 * A worker of a scaled-out deployment: it drives the sessions of one PostgreSQL schema, taking the
 * messages that any HTTP node (`examples/http-node.ts`) submits to the durable inbox. Run as many
 * as you like, on as many machines: a session is driven by one worker at a time (the one holding
 * its lease), and moves to another when that one dies or drains.
 *
 * Environment: `DATABASE_URL` (required), `YOKE_SCHEMA` (default `agents`), `WORKER_CONCURRENCY`
 * (sessions driven at once, default 8). The model is a scripted one that answers every message
 * (no network) unless `DEEPSEEK_API_KEY` is set; then it is DeepSeek.
 *
 * Prints `worker <id> ready` once it listens for work; SIGTERM or SIGINT drains it (running turns
 * get up to 10 s, then their sessions are handed over) and it exits.
 *
 * Run: `DATABASE_URL=postgresql://localhost/app npm run example -- worker`
 */
import { deepseek, type ModelAdapter, type ModelRequest, type ModelRoute } from 'yoke'
import { createWorker, postgresPersistence } from 'yoke/postgres'
import { type ScriptedReply, scriptedModel, text } from 'yoke/testing'

/** The scripted answer: the user's words back, so a demo shows which message a turn ran. */
function echo(request: ModelRequest): ScriptedReply {
  const last = request.messages.at(-1)
  const said =
    last?.role === 'user' ? last.content.map((block) => (block.type === 'text' ? block.text : '')).join('') : ''
  return text(`You said: ${said}`, { chunkSize: 8 })
}

function modelFromEnvironment(): { readonly model: ModelAdapter | ModelRoute; readonly describe: string } {
  const apiKey = process.env['DEEPSEEK_API_KEY']
  if (apiKey === undefined || apiKey === '') {
    // A script has one entry per request; a worker needs as many as it will get.
    return { model: scriptedModel(Array.from({ length: 100_000 }, () => echo)), describe: 'scripted (no network)' }
  }
  return { model: { adapter: deepseek({ apiKey }), model: 'deepseek-v4-flash' }, describe: 'DeepSeek' }
}

const connectionString = process.env['DATABASE_URL']
if (connectionString === undefined || connectionString === '') {
  console.error('Set DATABASE_URL to a PostgreSQL database, e.g. postgresql://localhost/app')
  process.exit(2)
}
const { model, describe } = modelFromEnvironment()
const worker = await createWorker({
  model,
  instructions: 'You are a helpful assistant. Answer briefly.',
  persistence: postgresPersistence({ connectionString, schema: process.env['YOKE_SCHEMA'] ?? 'agents' }),
  concurrency: Number(process.env['WORKER_CONCURRENCY'] ?? 8),
})
console.log(`worker ${worker.id} ready (model: ${describe})`)

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    // Running turns may finish for 10 s; then their sessions are released for another worker.
    worker.close({ drainMs: 10_000 }).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error)
        process.exit(1)
      },
    )
  })
}
