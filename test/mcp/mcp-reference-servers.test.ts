/**
 * `yoke/mcp` against two more reference servers over stdio, through full agent turns with a
 * scripted model: `@modelcontextprotocol/server-filesystem` in a temp dir (its annotations decide
 * which calls run side by side: read tools together, write and move tools alone) and
 * `@modelcontextprotocol/server-memory` with its graph in a temp file (a turn that creates
 * entities, then one that reads the graph back).
 *
 * @module
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { type Agent, createHarness, type Harness } from 'yoke'
import { fakeIds, scriptedModel, text } from 'yoke/testing'
import { type McpMountedTool, mcpPlugin, mcpServer } from '../../src/mcp/index.js'

const require = createRequire(import.meta.url)
const filesystemBin = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const memoryBin = require.resolve('@modelcontextprotocol/server-memory/dist/index.js')

const open: Harness[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-mcp-'))
  dirs.push(dir)
  return dir
}

async function world(script: Parameters<typeof scriptedModel>[0], server: ReturnType<typeof mcpServer>) {
  const mounted: McpMountedTool[] = []
  const model = scriptedModel(script)
  const harness = await createHarness({
    model,
    ids: fakeIds(),
    plugins: [mcpPlugin({ servers: [server], onMounted: (list) => mounted.push(...list) })],
  })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { model, harness, agent, mounted }
}

/** Records when each call's body starts and ends, to see which calls overlapped. */
function traceCalls(agent: Agent): string[] {
  const trace: string[] = []
  agent.ctx.on('tools/execute', async ({ call }, next) => {
    trace.push(`start ${call.callId}`)
    const result = await next()
    trace.push(`end ${call.callId}`)
    return result
  })
  return trace
}

function sentResults(request: { messages: readonly { content: readonly unknown[] }[] } | undefined): string[] {
  return (request?.messages ?? []).flatMap((message) =>
    (message.content as { type: string; isError?: boolean; content?: { text?: string }[] }[]).flatMap((block) =>
      block.type === 'tool-result'
        ? [`${block.isError ? 'error: ' : ''}${(block.content ?? []).map((entry) => entry.text ?? '').join('')}`]
        : [],
    ),
  )
}

describe('server-filesystem in a temp dir', () => {
  test('its annotations decide the scheduling: read tools run side by side, write and move tools alone', async () => {
    const dir = await tempDir()
    const { mounted, harness } = await world(
      [],
      mcpServer({ name: 'files', command: process.execPath, args: [filesystemBin, dir] }),
    )
    const modes = Object.fromEntries(mounted.map((entry) => [entry.tool, entry.mode]))
    expect(modes).toMatchObject({
      read_text_file: 'parallel',
      read_multiple_files: 'parallel',
      list_directory: 'parallel',
      search_files: 'parallel',
      get_file_info: 'parallel',
      // idempotent and not destructive
      create_directory: 'parallel',
      // destructive (write_file is idempotent, but it overwrites)
      write_file: 'exclusive',
      edit_file: 'exclusive',
      move_file: 'exclusive',
    })
    expect(harness.tools.executionMode({ name: 'read_text_file', arguments: '{"path":"x"}' })).toBe('parallel')
    expect(harness.tools.executionMode({ name: 'move_file', arguments: '{}' })).toBe('exclusive')
  })

  test('a turn reads two files at once, then writes and moves one at a time, on the real disk', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'a.txt'), 'alpha')
    await writeFile(join(dir, 'b.txt'), 'beta')
    const path = (name: string) => JSON.stringify(join(dir, name))
    const { agent, model } = await world(
      [
        {
          toolCalls: [
            { id: 'r1', name: 'read_text_file', arguments: `{"path":${path('a.txt')}}` },
            { id: 'r2', name: 'read_text_file', arguments: `{"path":${path('b.txt')}}` },
          ],
        },
        {
          toolCalls: [
            { id: 'w1', name: 'write_file', arguments: `{"path":${path('c.txt')},"content":"gamma"}` },
            { id: 'm1', name: 'move_file', arguments: `{"source":${path('a.txt')},"destination":${path('d.txt')}}` },
          ],
        },
        text('done'),
      ],
      mcpServer({ name: 'files', command: process.execPath, args: [filesystemBin, dir] }),
    )
    const trace = traceCalls(agent)
    expect(await agent.run('files')).toMatchObject({ reason: { kind: 'completed' }, text: 'done' })
    // Both reads start before either ends (they finish in either order); the write and the move never overlap.
    expect(trace.slice(0, 2)).toEqual(['start r1', 'start r2'])
    expect(trace.slice(2, 4).sort()).toEqual(['end r1', 'end r2'])
    expect(trace.slice(4)).toEqual(['start w1', 'end w1', 'start m1', 'end m1'])
    expect(sentResults(model.requests[1])).toEqual(['alpha', 'beta'])
    expect(await readFile(join(dir, 'c.txt'), 'utf8')).toBe('gamma')
    expect(await readFile(join(dir, 'd.txt'), 'utf8')).toBe('alpha')
  })

  test('a path outside the allowed dir is a tool error the model sees, and the next turn works', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'a.txt'), 'alpha')
    const { agent, model } = await world(
      [
        { toolCalls: [{ id: 'r1', name: 'read_text_file', arguments: '{"path":"/etc/hostname"}' }] },
        text('refused'),
        { toolCalls: [{ id: 'r2', name: 'read_text_file', arguments: JSON.stringify({ path: join(dir, 'a.txt') }) }] },
        text('ok'),
      ],
      mcpServer({ name: 'files', command: process.execPath, args: [filesystemBin, dir] }),
    )
    expect(await agent.run('escape')).toMatchObject({ reason: { kind: 'completed' } })
    expect(sentResults(model.requests[1])[0]).toMatch(/^error: .*(denied|outside)/i)
    expect(await agent.run('again')).toMatchObject({ reason: { kind: 'completed' } })
    expect(sentResults(model.requests[3]).at(-1)).toBe('alpha')
  })
})

describe('server-memory with its graph in a temp file', () => {
  test('a turn creates entities and a relation, the next reads the graph back from the server', async () => {
    const dir = await tempDir()
    const file = join(dir, 'memory.jsonl')
    const entities = [
      { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
      { name: 'Engine', entityType: 'machine', observations: ['analytical'] },
    ]
    const { agent, model, mounted } = await world(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'create_entities', arguments: JSON.stringify({ entities }) },
            {
              id: 'c2',
              name: 'create_relations',
              arguments: JSON.stringify({ relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }] }),
            },
          ],
        },
        text('remembered'),
        { toolCalls: [{ id: 'c3', name: 'read_graph', arguments: '{}' }] },
        text('recalled'),
      ],
      mcpServer({
        name: 'memory',
        command: process.execPath,
        args: [memoryBin],
        env: { MEMORY_FILE_PATH: file },
      }),
    )
    expect(mounted.find((entry) => entry.tool === 'create_entities')?.mode).toBe('exclusive')
    expect(mounted.find((entry) => entry.tool === 'read_graph')?.mode).toBe('parallel')
    expect(await agent.run('remember')).toMatchObject({ reason: { kind: 'completed' } })
    expect(await agent.run('recall')).toMatchObject({ reason: { kind: 'completed' } })
    const graph = JSON.parse(sentResults(model.requests[3]).at(-1) ?? '') as {
      entities: { name: string }[]
      relations: { from: string; to: string; relationType: string }[]
    }
    expect(graph.entities.map((entity) => entity.name)).toEqual(['Ada', 'Engine'])
    expect(graph.relations).toEqual([{ from: 'Ada', to: 'Engine', relationType: 'programmed' }])
    expect(await readFile(file, 'utf8')).toContain('"Ada"')
  })
})
