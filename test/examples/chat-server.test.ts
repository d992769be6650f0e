/**
 * examples/chat-server.ts run as a real process (bundled once with esbuild, `yoke` aliased to the
 * source). With `--demo` it serves itself over loopback HTTP, drops an SSE connection mid-answer,
 * resumes it with Last-Event-ID, extracts structured output, and leaves a JSONL log that this test
 * reads back through a fresh harness. Without it, it listens until SIGTERM, then drains the turns in flight and closes.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createParser } from 'eventsource-parser'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { createHarness } from 'yoke'
import { type Bundle, bundle } from '../helpers/child-process.js'

let example: Bundle | undefined
const cleanups: (() => Promise<void>)[] = []

beforeAll(async () => {
  example = await bundle('examples/chat-server.ts')
}, 30_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

afterAll(async () => {
  await example?.remove()
})

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-chat-server-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

test('the demo streams a turn, resumes it after a disconnect with every event once, extracts typed output, and refuses bad input', async () => {
  if (example === undefined) throw new Error('the example is not bundled yet')
  const cwd = await freshDir()
  const outcome = await example.run(['--demo'], { cwd })
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  const lines = outcome.stdout.trimEnd().split('\n')
  expect(lines[0]).toMatch(
    /^chat server on http:\/\/127\.0\.0\.1:\d+ · model: scripted \(no network; set DEEPSEEK_API_KEY to use DeepSeek\)$/,
  )
  expect(lines.slice(1, 3)).toEqual(['  → list_orders {"status":"open"}', '  → track_order {"orderId":"A-1042"}'])
  const hungUp =
    /^POST \/chat\/alice@example\.com: turn 1, (\d+) events, disconnected mid-answer after seq (\d+)$/.exec(
      lines[3] ?? '',
    )
  expect(hungUp, lines[3]).not.toBeNull()
  const [, firstCount, lastEventId] = hungUp ?? []
  const resumed = new RegExp(
    `^GET /chat/alice@example\\.com \\(Last-Event-ID: ${lastEventId}\\): (\\d+) more events, turn 1 completed$`,
  ).exec(lines[4] ?? '')
  expect(resumed, lines[4]).not.toBeNull()
  const total = Number(firstCount) + Number(resumed?.[1])
  expect(lines.slice(5)).toEqual([
    'answer: You have 2 open orders: A-1001 (3 umbrellas) and A-1003 (1 raincoat). I found no order A-1042 on your account; could you check the number?',
    `joined seqs 1–${total} equal the log's turn 1: ${total} events, no gap, no duplicate`,
    'POST /extract/alice@example.com: 200 item=umbrellas quantity=3',
    'POST /extract/alice@example.com (no quantity in it): 422 OUTPUT_INVALID at quantity',
    'POST /chat/alice@example.com (empty body): 400 EMPTY_PROMPT',
    'GET /chat/alice@example.com (Last-Event-ID: abc): 400 INVALID_LAST_EVENT_ID',
    'POST /chat/no spaces please: 400 INVALID_USER',
    'closed · log sessions/alice@example.com.jsonl',
  ])

  // The file is named after the user id, '@' and '.' kept; its header names the session.
  const file = await readFile(join(cwd, 'sessions', 'alice@example.com.jsonl'), 'utf8')
  expect(JSON.parse(file.split('\n')[0] ?? '')).toMatchObject({ type: 'session', id: 'alice@example.com' })

  // Read back by a fresh harness: the chat turn's events are all on disk, seq 1 to `total`.
  const harness = await createHarness({ persistence: { dir: join(cwd, 'sessions') } })
  try {
    const { events, repairPending } = await harness.readSession('alice@example.com')
    expect(repairPending).toBe(false)
    const turn = events.filter((event) => event.seq >= 1 && event.seq <= total)
    expect(turn.map((event) => event.seq)).toEqual(Array.from({ length: total }, (_, index) => index + 1))
    expect(turn[0]?.type).toBe('turn/start')
    expect(turn.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } })
    // The plain JSON result and the `toolResult` error, as the model saw them.
    const rows = [
      { id: 'A-1001', item: 'umbrella', quantity: 3, status: 'open' },
      { id: 'A-1003', item: 'raincoat', quantity: 1, status: 'open' },
    ]
    expect(turn.filter((event) => event.type === 'tool/result').map((event) => event.data)).toMatchObject([
      {
        message: {
          content: [
            { toolCallId: 'orders_1', isError: false, content: [{ type: 'text', text: JSON.stringify({ rows }) }] },
          ],
        },
      },
      {
        message: {
          content: [
            {
              toolCallId: 'track_1',
              isError: true,
              content: [{ type: 'text', text: 'no order A-1042 for this user' }],
            },
          ],
        },
      },
    ])
    // Two more turns, the extractions (the second with its repair step); the bad requests appended nothing.
    expect(events.filter((event) => event.type === 'turn/end').map((event) => event.data)).toMatchObject([
      { turn: 1, reason: { kind: 'completed' } },
      { turn: 2, reason: { kind: 'completed' } },
      { turn: 3, reason: { kind: 'completed' } },
    ])
    expect(events.filter((event) => event.type === 'user/message').map((event) => event.data)).toMatchObject([
      {
        source: { kind: 'user' },
        content: [{ type: 'text', text: 'Which of my orders are open, and where is A-1042?' }],
      },
      { source: { kind: 'user' }, content: [{ type: 'text', text: 'Please send me 3 umbrellas.' }] },
      { source: { kind: 'user' }, content: [{ type: 'text', text: 'Send me something nice.' }] },
      { source: { kind: 'plugin' } },
    ])
  } finally {
    await harness.close()
  }
}, 60_000)

test('without --demo it listens on PORT, serves a tenant:user id, and drains on SIGTERM: the turn in flight finishes, streams to its end and is stored', async () => {
  if (example === undefined) throw new Error('the example is not bundled yet')
  const cwd = await freshDir()
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' }
  // As runProcess does: vitest's loader must not leak in, and no live model.
  delete env['NODE_OPTIONS']
  delete env['DEEPSEEK_API_KEY']
  const child = spawn(process.execPath, [example.file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  cleanups.push(async () => void child.kill('SIGKILL'))
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const lines: string[] = []
  const reader = createInterface({ input: child.stdout })
  const firstLine = new Promise<string>((resolve) => reader.once('line', resolve))
  reader.on('line', (line) => lines.push(line))
  const url = /^chat server on (http:\/\/127\.0\.0\.1:\d+) · sessions in sessions · model: scripted/.exec(
    await firstLine,
  )?.[1]
  expect(url, lines[0]).toBeDefined()

  // A whole turn, read to its end.
  const chat = `${url}/chat/${encodeURIComponent('tenant:bob')}`
  const whole = await fetch(chat, { method: 'POST', body: 'Which orders are open?' })
  expect(whole.headers.get('content-type')).toContain('text/event-stream')
  const types: string[] = []
  const parser = createParser({ onEvent: (message) => types.push(message.event ?? '') })
  parser.feed(await whole.text())
  expect(types[0]).toBe('turn/start')
  expect(types.at(-1)).toBe('turn/end')

  // A second turn, and SIGTERM while its answer streams: the server stops taking connections, the
  // turn finishes (drained), its stream reaches the client to its end, then the harness closes.
  const open = await fetch(chat, { method: 'POST', body: 'And again?' })
  const body = open.body?.getReader()
  let seen = ''
  while (body !== undefined && !seen.includes('text-delta')) {
    const chunk = await body.read()
    if (chunk.done) break
    seen += new TextDecoder().decode(chunk.value)
  }
  child.kill('SIGTERM')
  while (body !== undefined) {
    const chunk = await body.read()
    if (chunk.done) break
    seen += new TextDecoder().decode(chunk.value)
  }
  const drained: string[] = []
  createParser({ onEvent: (message) => drained.push(message.event ?? '') }).feed(seen)
  expect(drained.at(-1)).toBe('turn/end')
  expect(await exited).toBe(0)
  expect(stderr).toBe('')
  expect(lines.slice(1)).toEqual(['SIGTERM: closing (turns in flight get 10 s to finish)', 'closed'])

  // `:` is `=` in the file name; the log is closed: the cut turn ended, nothing to repair.
  const file = await readFile(join(cwd, 'sessions', 'tenant=bob.jsonl'), 'utf8')
  expect(JSON.parse(file.split('\n')[0] ?? '')).toMatchObject({ type: 'session', id: 'tenant:bob' })
  const harness = await createHarness({ persistence: { dir: join(cwd, 'sessions') } })
  try {
    const { events, repairPending } = await harness.readSession('tenant:bob')
    expect(repairPending).toBe(false)
    const ends = events.filter((event) => event.type === 'turn/end').map((event) => JSON.stringify(event.data))
    expect(ends[0]).toBe(JSON.stringify({ turn: 1, reason: { kind: 'completed' } }))
    // The answer streams for ~0.4 s, well inside the 10 s drain: the turn completed.
    expect(ends[1]).toBe(JSON.stringify({ turn: 2, reason: { kind: 'completed' } }))
    expect(ends).toHaveLength(2)
  } finally {
    await harness.close()
  }
}, 60_000)
