/**
 * The shipped declarations type-check for a strict consumer: the packed tarball installed into
 * three throwaway projects, one per module resolution a user may have (ESM with `nodenext`,
 * CommonJS with `node16`, and `bundler`), each `strict` with `skipLibCheck: false`, so the
 * compiler checks `dist/*.d.ts` as well as the program. The program imports every subpath and
 * uses the documented API (the database, AI SDK and MCP subpaths as declarations only, their peers not
 * installed): a harness with a scripted model, a tool with a zod schema, JSONL
 * persistence, `agent.run()`, `agent.stream()`, the errors' `is()`, and a plugin that listens to
 * a feature's event, reads `ctx.tools` / `ctx.sessions` and declares an event of its own (so the
 * features' declaration merges must survive the bundled declarations). The compiler is this
 * repository's `typescript`; a failure prints its whole output.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Outcome, root, runProcess } from '../helpers/child-process.js'
import { installUnpacked, packYoke } from './pack-yoke.js'

/** The program every consumer compiles (no top-level await: it is CommonJS in one of them). */
const program = `import { z } from 'zod'
import {
  type Agent,
  type AgentRun,
  createHarness,
  defineEvents,
  definePlugin,
  defineTool,
  type Emit,
  type Harness,
  HarnessError,
  InvalidOptionsError,
  type ModelAdapter,
  type SessionEvent,
  type TurnResult,
} from 'yoke'
import { type ScriptedReply, scriptedModel, text } from 'yoke/testing'
import { type PgPool, type PostgresPersistenceOptions, postgresPersistence } from 'yoke/postgres'
import { type SqlitePersistenceOptions, sqlitePersistence } from 'yoke/sqlite'
import { type AiSdkLanguageModel, aiSdkModel } from 'yoke/ai-sdk'
import { McpServerError, mcpPlugin, mcpServer } from 'yoke/mcp'

// A plugin's own event, added to the package's event map as the docs teach.
declare module 'yoke' {
  interface YokeEvents {
    'acme/charged': Emit<{ amount: number }>
  }
}
const acmeEvents = defineEvents<{ 'acme/charged': Emit<{ amount: number }> }>({ 'acme/charged': 'emit' })

// The features' keys, events and context accessors reach a consumer through the package's own merges.
const audit = definePlugin({
  name: 'audit',
  events: [acmeEvents],
  apply(ctx) {
    ctx.on('session/event', ({ session, event }) => {
      const id: string = session.id
      const seq: number = event.seq
      console.log(id, seq)
    })
    ctx.on('acme/charged', ({ amount }) => {
      const cents: number = amount
      console.log(cents)
    })
    const toolNames: readonly string[] = ctx.tools.list().map((tool) => tool.name)
    console.log(toolNames, ctx.sessions.list().length)
    // @ts-expect-error an event no feature and no plugin declared
    ctx.on('nobody/declared', () => {})
  },
})

const weather = defineTool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  input: z.object({ city: z.string().min(1) }),
  isConcurrencySafe: () => true,
  execute: ({ city }) => {
    const name: string = city
    return name + ': sunny'
  },
})

const callWeather: ScriptedReply = { toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }] }
const model: ModelAdapter = scriptedModel([callWeather, text('Paris: sunny.'), text('Still sunny.')])

async function main(): Promise<void> {
  const harness: Harness = await createHarness({ model, tools: [weather], plugins: [audit], persistence: { dir: './sessions' } })
  try {
    const agent: Agent = await harness.openAgent('consumer')
    const result: TurnResult = await agent.run('What is the weather in Paris?')
    if (result.reason.kind === 'completed') console.log(result.turn, result.text, result.usage)
    const run: AgentRun = agent.stream('And now?')
    for await (const event of run) {
      const seen: SessionEvent = event
      console.log(seen.seq, seen.type)
    }
    const streamed: TurnResult = await run.result
    console.log(streamed.messages.length, agent.session.length)
  } catch (error) {
    if (InvalidOptionsError.is(error)) console.error(error.code, error.message)
    else if (HarnessError.is(error)) console.error(error.code)
    throw error
  } finally {
    await harness.close()
  }
}

// Declarations only: pg is not installed here, and the subpath's types must not need it.
function postgresStore(pool?: PgPool) {
  const options: PostgresPersistenceOptions =
    pool === undefined ? { connectionString: 'postgresql://app@localhost/app', schema: 'agents' } : { pool, lease: { ttlMs: 30_000 } }
  return postgresPersistence(options)
}

function sqliteStore() {
  const options: SqlitePersistenceOptions = { path: './sessions.db', synchronous: 'full' }
  return sqlitePersistence(options)
}

// Declarations only: neither the AI SDK nor the MCP SDK is installed here, and the subpaths' types
// must not need them.
function fromAiSdk(languageModel: AiSdkLanguageModel): ModelAdapter {
  return aiSdkModel(languageModel)
}

const tools = mcpPlugin({
  servers: [mcpServer({ name: 'files', command: 'mcp-files', args: ['--root', '.'], env: { TOKEN: 'x' } })],
})
const failed = (error: unknown): string | undefined => (McpServerError.is(error) ? error.code : undefined)

void main()
void postgresStore
void sqliteStore
void fromAiSdk
void tools
void failed
`

/** Strict, and the package's declarations are checked too. */
const strict = { strict: true, skipLibCheck: false, noEmit: true, target: 'ES2022', types: ['node'] }

const consumers = [
  {
    name: 'ESM, nodenext',
    packageJson: { name: 'consumer-esm', private: true, type: 'module' },
    compilerOptions: { ...strict, module: 'nodenext', moduleResolution: 'nodenext' },
  },
  {
    // No "type": "module": main.ts is CommonJS, so `yoke` resolves through the `require` condition.
    name: 'CommonJS, node16',
    packageJson: { name: 'consumer-cjs', private: true },
    compilerOptions: { ...strict, module: 'node16', moduleResolution: 'node16' },
  },
  {
    name: 'bundler',
    packageJson: { name: 'consumer-bundler', private: true, type: 'module' },
    compilerOptions: { ...strict, module: 'esnext', moduleResolution: 'bundler' },
  },
] as const

let work = ''
const compiled = new Map<string, Outcome>()

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'yoke-consumer-'))
  const { tarball } = await packYoke(work)
  const projects = await Promise.all(
    consumers.map(async (consumer, index) => {
      const project = join(work, `consumer-${index}`)
      await installUnpacked(project, tarball, consumer.packageJson, ['@types/node'])
      await writeFile(
        join(project, 'tsconfig.json'),
        `${JSON.stringify({ compilerOptions: consumer.compilerOptions, files: ['main.ts'] }, null, 2)}\n`,
      )
      await writeFile(join(project, 'main.ts'), program)
      return { consumer, project }
    }),
  )
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  // The three compilers run at once: each is one process, mostly waiting on the others' disk reads.
  const outcomes = await Promise.all(
    projects.map(({ project }) =>
      runProcess(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: project }),
    ),
  )
  for (const [index, { consumer }] of projects.entries()) compiled.set(consumer.name, outcomes[index] as Outcome)
}, 180_000)

afterAll(async () => {
  if (work !== '') await rm(work, { recursive: true, force: true })
})

describe('a strict consumer of the packed tarball type-checks (skipLibCheck: false)', () => {
  for (const consumer of consumers) {
    test(`${consumer.name}: tsc reports nothing`, () => {
      const outcome = compiled.get(consumer.name)
      expect(outcome, 'tsc did not run').toBeDefined()
      // The whole compiler output, so a failure says which declaration broke.
      expect(`${outcome?.stdout ?? ''}${outcome?.stderr ?? ''}`, `tsc in the ${consumer.name} consumer`).toBe('')
      expect(outcome?.code).toBe(0)
    })
  }
})
