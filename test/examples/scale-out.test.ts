/**
 * `examples/worker.ts` and `examples/http-node.ts` run as real processes (bundled, `yoke` aliased
 * to the source, `pg` installed) against the test database: a message posted to the HTTP node is
 * run by the worker and streamed back over SSE; a retried POST with the same `Idempotency-Key` is
 * the same message; a reconnect with `Last-Event-ID` resumes right after it; bad input gets the
 * documented status and code; both processes stop cleanly on SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { createTestSchema, skipPostgres, type TestSchema } from '../helpers/postgres.js'
import { readSseFrames, type SseFrame } from '../helpers/sse-frames.js'

let schema: TestSchema | undefined
let worker: Bundle | undefined
let node: Bundle | undefined
const running = new Set<ChildProcess>()

beforeAll(async () => {
  if (skipPostgres) return
  schema = await createTestSchema('example_scale_out')
  ;[worker, node] = await Promise.all([
    bundle('examples/worker.ts', { external: ['pg'] }),
    bundle('examples/http-node.ts', { external: ['pg'] }),
  ])
}, 60_000)

afterAll(async () => {
  for (const child of running) child.kill('SIGKILL')
  await worker?.remove()
  await node?.remove()
  await schema?.drop()
})

/** Starts a bundle with the database in its environment; resolves with its first line. */
async function start(
  entry: Bundle,
  env: Record<string, string>,
): Promise<{ process: ChildProcess; firstLine: string; exited: Promise<number | null>; stderr: () => string }> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: schema!.connectionString,
    YOKE_SCHEMA: schema!.schema,
    ...env,
  }
  delete childEnv['NODE_OPTIONS']
  delete childEnv['DEEPSEEK_API_KEY']
  const child = spawn(process.execPath, [entry.file], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child)
      resolve(code)
    }),
  )
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    void exited.then((code) => reject(new Error(`exited ${code} before a line: ${stderr}`)))
  })
  return { process: child, firstLine, exited, stderr: () => stderr }
}

/** The frames of `url` until its stream ends. */
async function readEvents(url: string, headers: Record<string, string> = {}): Promise<SseFrame[]> {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  expect(response.status).toBe(200)
  return readSseFrames(response, controller)
}

describe.skipIf(skipPostgres)('the scale-out examples', () => {
  test('an HTTP node takes messages, a worker runs them, and any node streams them back', async () => {
    const drivingWorker = await start(worker!, {})
    expect(drivingWorker.firstLine).toMatch(/^worker worker-[0-9a-f]+ ready \(model: scripted \(no network\)\)$/)
    const httpNode = await start(node!, { PORT: '0' })
    const origin = /^http node on (http:\/\/127\.0\.0\.1:\d+)$/.exec(httpNode.firstLine)?.[1]
    expect(origin, httpNode.firstLine).toBeDefined()

    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${origin}${path}`, { method: 'POST', body, headers })
    const first = await post('/sessions/demo/messages', 'Hello there', { 'idempotency-key': 'k-1' })
    expect(first.status).toBe(202)
    const receipt = (await first.json()) as { messageId: string; duplicate: boolean }
    expect(receipt.duplicate).toBe(false)
    // A client retrying its POST (a timeout, a reconnect) gets the same message back.
    const retried = await post('/sessions/demo/messages', 'Hello there', { 'idempotency-key': 'k-1' })
    expect(await retried.json()).toEqual({ messageId: receipt.messageId, duplicate: true })

    const frames = await readEvents(`${origin}/sessions/demo/events?until=turn-end`)
    const events = frames.map((frame) => JSON.parse(frame.data) as { seq: number; type: string; data: unknown })
    expect(frames.map((frame) => frame.id)).toEqual(events.map((event) => String(event.seq)))
    expect(events.at(-1)?.type).toBe('turn/end')
    const user = events.find((event) => event.type === 'user/message')
    expect((user?.data as { id: string } | undefined)?.id).toBe(receipt.messageId)
    const answer = events.find((event) => event.type === 'assistant/message')
    expect(JSON.stringify(answer?.data)).toContain('You said: Hello there')

    // A reconnect with Last-Event-ID gets exactly the events after it.
    const middle = frames[Math.floor(frames.length / 2)]!
    const rest = await readEvents(`${origin}/sessions/demo/events?until=turn-end`, { 'last-event-id': middle.id! })
    expect(rest.map((frame) => frame.id)).toEqual(frames.slice(frames.indexOf(middle) + 1).map((frame) => frame.id))

    // Bad input: a busy policy that does not exist, a message over 1 MiB, an unknown route.
    const badBusy = await post('/sessions/demo/messages?busy=maybe', 'hi')
    expect(badBusy.status).toBe(400)
    expect(((await badBusy.json()) as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENT')
    const huge = await post('/sessions/demo/messages', 'x'.repeat(1_100_000))
    expect(huge.status).toBe(413)
    expect(((await huge.json()) as { error: { code: string } }).error.code).toBe('MESSAGE_TOO_LARGE')
    expect((await fetch(`${origin}/nope`)).status).toBe(404)

    httpNode.process.kill('SIGTERM')
    drivingWorker.process.kill('SIGTERM')
    expect(await httpNode.exited).toBe(0)
    expect(await drivingWorker.exited).toBe(0)
    expect(drivingWorker.stderr()).toBe('')
  }, 60_000)
})
