/**
 * The README's code blocks, run. The first one is a whole program: it is cut out of the README,
 * bundled and run twice as a real process, so what a newcomer copies is exactly what is tested.
 * The later blocks are fragments of a program (they use a `harness` or a `request` from around
 * them); each is repeated here with the missing pieces filled in, and a list of the blocks' first
 * lines makes a new or changed block fail here until it is tested too (some are tested in
 * readme-first-day.test.ts).
 */
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, deepseek, defineTool, openaiCompatible, SessionForkError } from 'yoke'
import { fail, fakeClock, fakeIds, scriptedModel, startMockOpenAIServer, text } from 'yoke/testing'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { parseJsonEventStream, readUIMessageStream, type UIMessage, uiMessageChunkSchema } from 'ai'
import pg from 'pg'
import { aiSdkModel, parseChatRequest, uiMessageStreamResponse } from '../../src/ai-sdk/index.js'
import { mcpPlugin, mcpServer } from '../../src/mcp/index.js'
import {
  createPostgresClient,
  createPostgresTail,
  createWorker,
  postgresPersistence,
} from '../../src/postgres/index.js'
import { sqlitePersistence } from '../../src/sqlite/index.js'
import { bundle, root } from '../helpers/child-process.js'
import { createTestSchema, skipPostgres } from '../helpers/postgres.js'

const readme = readFileSync(join(root, 'README.md'), 'utf8')

/** Every fenced block of the README with its language. */
const blocks = [...readme.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((match) => ({
  language: match[1] ?? '',
  code: match[2] ?? '',
}))
const typescriptBlocks = blocks.filter((block) => block.language === 'ts').map((block) => block.code)

test('every TypeScript block of the README is one this file runs', () => {
  expect(typescriptBlocks.map((code) => code.split('\n')[0])).toEqual([
    "import { z } from 'zod'", // the first program
    "const agent = await harness.createAgent({ sessionId: 'demo' })   // a new session ('demo', or a fresh id)",
    "const limited = await agent.run('Compare the three vendors', { maxSteps: 4 })   // at most 4 model requests",
    "for await (const event of agent.stream('What is the weather in Paris?')) {",
    "const agent = await harness.resumeAgent('demo')   // or openAgent('demo'): live, else resumed, else created",
    "const fresh = await harness.openAgent('demo', { queued: 'discard' })   // drop what a dead process left queued",
    "const child = await harness.fork('demo', { at: turnEndSeq, id: 'demo-alt' }) // a live or a stored session",
    "import { readFile } from 'node:fs/promises'",
    'const findUsers = defineTool({',
    "import { createHarness, deepseek, openaiCompatible } from 'yoke'",
    "import { createOpenAICompatible } from '@ai-sdk/openai-compatible'   // or @ai-sdk/anthropic, @ai-sdk/google, …",
    "const harness = await createHarness({ persistence: { dir: './sessions' } })   // one JSONL file per session",
    "import pg from 'pg'",
    "import { createPostgresClient, createPostgresTail, createWorker, postgresPersistence } from 'yoke/postgres'",
    'const sessions = harness.ctx.sessions',
    "import { fakeClock, fakeIds, fail, scriptedModel, startMockOpenAIServer, text } from 'yoke/testing'",
  ])
})

test('the README opens with an agent: its first code block after the install is the program with a tool, JSONL persistence and a resume', () => {
  const firstCode = blocks.find((block) => block.language !== 'sh')
  expect(firstCode?.language).toBe('ts')
  expect(firstCode?.code).toContain('defineTool(')
  expect(firstCode?.code).toContain("persistence: { dir: 'sessions' }")
  expect(firstCode?.code).toContain('harness.resumeAgent(')
  expect(readme.indexOf('```ts')).toBeLessThan(readme.indexOf('## Concepts'))
})

test('the README first program runs as written, and a second run of it continues the same session', async () => {
  const program = typescriptBlocks[0] ?? ''
  // What the program's comments promise it prints, in order (`// turn 1: …`).
  const promised = [...program.matchAll(/\/\/ (turn \d+: .*)$/gm)].map((match) => match[1])
  expect(promised).toEqual(['turn 1: It is sunny in Paris, 21 °C.', 'turn 2: You asked about the weather in Paris.'])

  await mkdir(join(root, 'node_modules', '.cache'), { recursive: true })
  const source = await mkdtemp(join(root, 'node_modules', '.cache', 'yoke-readme-'))
  const cwd = await mkdtemp(join(tmpdir(), 'yoke-readme-run-'))
  const built = await (async () => {
    await writeFile(join(source, 'first-program.ts'), program)
    return bundle(join(source, 'first-program.ts').slice(root.length + 1))
  })()
  try {
    const first = await built.run([], { cwd })
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout.trimEnd().split('\n')).toEqual(promised)

    const log = await readFile(join(cwd, 'sessions', 'trip.jsonl'), 'utf8')
    const types = log
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type)
    expect(types[0]).toBe('session')
    expect(types).toContain('tool/call')
    expect(types.filter((type) => type === 'turn/end')).toHaveLength(2)

    // "Run it again and it continues with turns 3 and 4."
    const again = await built.run([], { cwd })
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    expect(again.stdout.trimEnd().split('\n')).toEqual([
      'turn 3: It is sunny in Paris, 21 °C.',
      'turn 4: You asked about the weather in Paris.',
    ])
  } finally {
    await built.remove()
    await rm(source, { recursive: true, force: true })
    await rm(cwd, { recursive: true, force: true })
  }
})

test('the README agents, resume and fork examples run as written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-readme-'))
  try {
    const model = scriptedModel([text('Hello!'), text('Again!'), text('Here.'), text('Branch.')])
    const ids = fakeIds()
    {
      await using harness = await createHarness({ model, persistence: { dir }, clock: fakeClock({ now: 0 }), ids })
      const agent = await harness.createAgent({ sessionId: 'demo' })
      const result = await agent.run('hi')
      expect(result).toMatchObject({
        turn: 1,
        reason: { kind: 'completed' },
        text: 'Hello!',
        usage: { inputTokens: 0, outputTokens: 0 },
      })
      const streamed: string[] = []
      for await (const event of agent.stream('and again?')) streamed.push(event.type)
      expect(streamed[0]).toBe('turn/start')
      expect(streamed).toContain('assistant/chunk')
      expect(streamed.at(-1)).toBe('turn/end')
    }
    await using harness = await createHarness({ model, persistence: { dir }, clock: fakeClock({ now: 0 }), ids })
    const agent = await harness.resumeAgent('demo')
    expect((await agent.run('where were we?')).turn).toBe(3)
    const turnEndSeq = agent.session.events.find((event) => event.type === 'turn/end')?.seq ?? -1
    const child = await harness.fork('demo', { at: turnEndSeq, id: 'demo-alt' })
    expect(child.header).toMatchObject({ parentSession: 'demo', seedLength: turnEndSeq + 1 })
    const branch = await harness.resumeAgent(child.id)
    expect(await branch.run('other way')).toMatchObject({ turn: 2, text: 'Branch.' })
    expect((await harness.listSessions()).map((summary) => summary.id).sort()).toEqual(['demo', 'demo-alt'])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('the README tools example: a parallel-safe read tool an agent calls', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-readme-tool-'))
  try {
    const path = join(dir, 'note.txt')
    await writeFile(path, 'remember the milk')
    const read = defineTool({
      name: 'read',
      description: 'Read a file',
      input: z.object({ path: z.string() }),
      isConcurrencySafe: () => true,
      execute: async ({ path }, { signal }) => readFile(path, { encoding: 'utf8', signal }),
    })
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'read', arguments: { path } },
          { id: 'c2', name: 'read', arguments: { path } },
        ],
      },
      text('It says to remember the milk.'),
    ])
    await using harness = await createHarness({ tools: [read], model, clock: fakeClock({ now: 0 }), ids: fakeIds() })
    expect(await harness.ctx.tools.executionMode({ name: 'read', arguments: JSON.stringify({ path }) })).toBe(
      'parallel',
    )
    const agent = await harness.createAgent()
    expect(await agent.run('what does the note say?')).toMatchObject({ text: 'It says to remember the milk.' })
    const results = agent.session.events.filter((event) => event.type === 'tool/result')
    expect(results.map((event) => JSON.stringify(event.data))).toEqual([
      expect.stringContaining('remember the milk'),
      expect.stringContaining('remember the milk'),
    ])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('the README models example builds both adapters, and a harness over DeepSeek starts without a key', async () => {
  await using harness = await createHarness({ model: deepseek({ model: 'deepseek-v4-flash' }) })
  expect(harness.describe().entries.map((entry) => entry.id)).toContain('model')
  const local = openaiCompatible({ baseURL: 'http://127.0.0.1:8000/v1', model: 'qwen3' })
  expect(local.defaultModel).toBe('qwen3')
})

test('the README persistence and session log examples run as written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-readme-log-'))
  try {
    await using harness = await createHarness({ persistence: { dir }, clock: fakeClock({ now: 0 }), ids: fakeIds() })
    const sessions = harness.ctx.sessions
    const session = sessions.create()
    session.append(
      'user/message',
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    )
    session.append('turn/start', { turn: 1 })
    expect(session.deriveMessages()).toHaveLength(1)
    const fork = sessions.fork(session, { at: 0 })
    expect(fork.header.parentSession).toBe('s1')
    expect(() => sessions.fork(session, { at: 1 })).toThrow(SessionForkError)
    expect(await harness.sessions.flush(session)).toBe(true)
    expect(await readFile(join(dir, 's1.jsonl'), 'utf8')).toContain('"turn/start"')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('the README ecosystem example: an AI SDK provider, an MCP server and the useChat route through one turn', async () => {
  const block = typescriptBlocks.find((code) => code.startsWith('import { createOpenAICompatible }')) ?? ''
  for (const piece of [
    "model: aiSdkModel(local('llama3.2'))",
    'plugins: [mcpPlugin({ servers: [files] })]',
    "'@modelcontextprotocol/server-filesystem', './data'",
    'const { id, input } = parseChatRequest(await request.json())',
    'return uiMessageStreamResponse((await harness.openAgent(id)).stream(input))',
  ])
    expect(block).toContain(piece)
  const dir = await mkdtemp(join(tmpdir(), 'yoke-readme-ecosystem-'))
  const data = join(dir, 'data')
  await mkdir(data)
  await writeFile(join(data, 'notes.txt'), 'buy milk')
  // The README's local server and `npx` stand in: the mock OpenAI-compatible server and the installed filesystem server.
  await using server = await startMockOpenAIServer({
    script: [
      { toolCalls: [{ id: 'call-1', name: 'list_directory', arguments: { path: data } }] },
      { text: 'The data folder holds notes.txt.' },
    ],
  })
  const local = createOpenAICompatible({ name: 'local', baseURL: server.baseURL })
  const files = mcpServer({
    name: 'files',
    command: process.execPath,
    args: [join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js'), data],
  })
  try {
    await using harness = await createHarness({
      model: aiSdkModel(local('llama3.2')),
      plugins: [mcpPlugin({ servers: [files] })],
      persistence: { dir: join(dir, 'sessions') },
    })
    async function POST(request: Request): Promise<Response> {
      const { id, input } = parseChatRequest(await request.json())
      return uiMessageStreamResponse((await harness.openAgent(id)).stream(input))
    }
    // The body `useChat` posts for a first message.
    const body = {
      id: 'chat-1',
      trigger: 'submit-message',
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'What is in the data folder?' }] }],
    }
    const response = await POST(
      new Request('http://localhost/api/chat', { method: 'POST', body: JSON.stringify(body) }),
    )
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1')
    // Read as the AI SDK's own client reads it.
    const chunks = parseJsonEventStream({
      stream: response.body as ReadableStream<Uint8Array>,
      schema: uiMessageChunkSchema,
    })
    const valid = chunks.pipeThrough(
      new TransformStream({
        transform(result, controller) {
          if (!result.success) throw result.error
          controller.enqueue(result.value)
        },
      }),
    )
    let message: UIMessage | undefined
    for await (const state of readUIMessageStream({ stream: valid })) message = state
    const tool = message?.parts.find((part) => part.type === 'tool-list_directory')
    expect(tool).toMatchObject({ state: 'output-available', input: { path: data } })
    expect(JSON.stringify(tool)).toContain('notes.txt')
    expect(message?.parts.filter((part) => part.type === 'text').map((part) => part.text)).toEqual([
      'The data folder holds notes.txt.',
    ])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('the README database example: a SQLite file and a shared pg pool, each storing a turn', async () => {
  const block = typescriptBlocks.find((code) => code.startsWith("import pg from 'pg'")) ?? ''
  expect(block).toContain("sqlitePersistence({ path: './sessions.db' })")
  expect(block).toContain("postgresPersistence({ pool, schema: 'agents' })")
  const dir = await mkdtemp(join(tmpdir(), 'yoke-readme-db-'))
  const schema = skipPostgres ? undefined : await createTestSchema('readme')
  try {
    const model = scriptedModel([text('stored in SQLite'), text('stored in PostgreSQL')])
    {
      await using local = await createHarness({
        model,
        persistence: sqlitePersistence({ path: join(dir, 'sessions.db') }),
      })
      expect((await (await local.openAgent('demo')).run('hi')).text).toBe('stored in SQLite')
    }
    if (schema !== undefined) {
      // The README's pool reads PG* variables; here the test server's connection string stands in for them.
      const pool = new pg.Pool({ connectionString: schema.connectionString })
      try {
        {
          await using shared = await createHarness({
            model,
            persistence: postgresPersistence({ pool, schema: schema.schema }),
          })
          expect((await (await shared.openAgent('demo')).run('hi')).text).toBe('stored in PostgreSQL')
        }
        // Closing the harness left the application's pool open.
        const rows = await pool.query(`SELECT count(*)::int AS n FROM ${schema.schema}.yoke_sessions`)
        expect(rows.rows[0]).toEqual({ n: 1 })
      } finally {
        await pool.end()
      }
    }
    await using reread = await createHarness({ persistence: sqlitePersistence({ path: join(dir, 'sessions.db') }) })
    expect((await reread.readSession('demo')).events.some((event) => event.type === 'turn/end')).toBe(true)
  } finally {
    await schema?.drop()
    await rm(dir, { recursive: true, force: true })
  }
})

test('the README scale-out example: a worker runs a submitted message and a tail streams its turn', async ({
  skip,
}) => {
  const block =
    typescriptBlocks.find((code) => code.startsWith('import { createPostgresClient, createPostgresTail')) ?? ''
  expect(block).toContain(
    "client.submit('support-42', 'Where is my order?', { idempotencyKey: 'req-7f3a', create: true })",
  )
  expect(block).toContain("tails.tail('support-42', { until: 'turn-end', waitForSession: true })")
  if (skipPostgres) skip()
  const schema = await createTestSchema('readme_scale_out')
  // The README reads DATABASE_URL and uses the schema 'agents'; here the test server and schema stand in.
  const connectionString = schema.connectionString
  const worker = await createWorker({
    model: scriptedModel([text('It left the warehouse today.')]),
    persistence: postgresPersistence({ connectionString, schema: schema.schema }),
    concurrency: 16,
  })
  const client = createPostgresClient({ connectionString, schema: schema.schema })
  const tails = createPostgresTail({ connectionString, schema: schema.schema })
  try {
    const { messageId } = await client.submit('support-42', 'Where is my order?', {
      idempotencyKey: 'req-7f3a',
      create: true,
    })
    const seen: string[] = []
    let userMessageId: string | undefined
    for await (const event of tails.tail('support-42', { until: 'turn-end', waitForSession: true })) {
      seen.push(`${event.seq} ${event.type}`)
      if (event.type === 'user/message') userMessageId = event.data.id
    }
    expect(userMessageId).toBe(messageId)
    expect(seen.at(-1)).toMatch(/^\d+ turn\/end$/)
    expect(seen.map((line) => line.split(' ')[0])).toEqual(seen.map((_, seq) => String(seq)))
  } finally {
    await tails.close()
    await client.close()
    await worker.close()
    await schema.drop()
  }
})

test('the README testing example runs as written', async () => {
  const clock = fakeClock({ now: 0 })
  const model = scriptedModel([fail('RATE_LIMIT'), text('hello')])
  await using harness = await createHarness({ clock, ids: fakeIds(), model })
  const agent = await harness.createAgent()
  const result = agent.run('hi')
  await clock.advance(1_000)
  await clock.advance(60_000)
  expect(await result).toMatchObject({ text: 'hello' })
  model.assertComplete()

  await using server = await startMockOpenAIServer({ script: [{ fault: 'connection-reset' }, { text: 'ok' }] })
  expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:/)
})
