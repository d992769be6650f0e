/**
 * `yoke/mcp` when a stdio server dies: the real `@modelcontextprotocol/server-everything` child,
 * killed with SIGKILL between two calls (the next call starts it again) and in the middle of a
 * long call (a typed tool error the model sees, the loop goes on, and the next call works on a new
 * child). Full agent turns with a scripted model and `verifyReconstruction: true`.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, onTestFinished, test } from 'vitest'
import { createHarness, type SessionEvent } from 'yoke'
import { call, fakeIds, scriptedModel, text } from 'yoke/testing'
import { mcpPlugin, mcpServer } from '../../src/mcp/index.js'
import { everythingBin, isAlive, useHarnesses } from './fixtures.js'

const open = useHarnesses()

/** The pids of this process's children whose command line holds `marker`. */
function childrenWith(marker: string): number[] {
  const listing = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
  return listing
    .split('\n')
    .filter((line) => line.includes(marker))
    .map((line) => Number.parseInt(line.trim(), 10))
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let wait = 0; wait < 200; wait++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function world(
  script: Parameters<typeof scriptedModel>[0],
  start: { readonly entry: string; readonly env?: Record<string, string> } = { entry: everythingBin },
) {
  // server-everything ignores arguments after the transport's name: the marker finds its process.
  const marker = `--yoke-test=${randomUUID()}`
  const model = scriptedModel(script)
  const server = mcpServer({
    name: 'everything',
    command: process.execPath,
    args: [start.entry, 'stdio', marker],
    ...(start.env === undefined ? {} : { env: start.env }),
  })
  const harness = await createHarness({ model, ids: fakeIds(), plugins: [mcpPlugin({ servers: [server] })] })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
  return { model, harness, agent, marker }
}

function results(events: readonly SessionEvent[]): { error?: { code?: string; name?: string } }[] {
  return events.filter((event) => event.type === 'tool/result').map((event) => event.data as never)
}

function lastResultText(request: { messages: readonly { content: readonly unknown[] }[] } | undefined): string {
  const blocks = (request?.messages ?? []).flatMap(
    (message) => message.content as { type: string; content?: { text?: string }[] }[],
  )
  const last = blocks.filter((block) => block.type === 'tool-result').at(-1)
  return (last?.content ?? []).map((entry) => entry.text ?? '').join('')
}

describe('a stdio server that dies', () => {
  test('killed between calls, it is started again on the next call (still without the parent secrets)', async () => {
    const { agent, model, marker } = await world([
      call('c1', 'echo', '{"message":"one"}'),
      text('ok'),
      call('c2', 'echo', '{"message":"two"}'),
      text('ok'),
      call('c3', 'get-env', '{}'),
      text('ok'),
    ])
    expect(await agent.run('first')).toMatchObject({ reason: { kind: 'completed' } })
    const [first] = childrenWith(marker)
    if (first === undefined) throw new Error('no child')
    // In the parent from now on: the restarted child must not get it.
    process.env['YOKE_MCP_RESTART_SECRET'] = 'parent-secret-value'
    onTestFinished(() => {
      delete process.env['YOKE_MCP_RESTART_SECRET']
    })
    process.kill(first, 'SIGKILL')
    await until(() => !isAlive(first) && childrenWith(marker).length === 0, 'the child to end')
    // Give the client the moment it needs to see its transport close.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await agent.run('second')).toMatchObject({ reason: { kind: 'completed' } })
    expect(lastResultText(model.requests[3])).toBe('Echo: two')
    const [second] = childrenWith(marker)
    expect(second).toBeDefined()
    expect(second).not.toBe(first)
    expect(results(agent.session.events).map((result) => result.error)).toEqual([undefined, undefined])
    expect(await agent.run('env')).toMatchObject({ reason: { kind: 'completed' } })
    const env = lastResultText(model.requests[5])
    expect(env).toContain('PATH')
    expect(env).not.toContain('YOKE_MCP_RESTART_SECRET')
    expect(env).not.toContain('parent-secret-value')
  })

  test('killed mid-call: a typed tool error the model sees, the loop goes on, the next call works', async () => {
    const { agent, model, harness, marker } = await world([
      call('c1', 'trigger-long-running-operation', '{"duration":30,"steps":60}'),
      text('the tool failed'),
      call('c2', 'echo', '{"message":"after"}'),
      text('ok'),
    ])
    let progressed = false
    harness.on('tools/progress', () => {
      progressed = true
    })
    const running = agent.run('long')
    await until(() => progressed, 'the call to report progress')
    const [pid] = childrenWith(marker)
    if (pid === undefined) throw new Error('no child')
    process.kill(pid, 'SIGKILL')
    const first = await running
    expect(first).toMatchObject({ reason: { kind: 'completed' }, text: 'the tool failed' })
    const [failed] = results(agent.session.events)
    expect(failed?.error).toEqual({ name: 'ToolFailedError', code: 'TOOL_FAILED' })
    expect(lastResultText(model.requests[1])).toMatch(
      /^Tool error \(TOOL_FAILED\): MCP server "everything": the server exited during the call and is started again/,
    )
    expect(await agent.run('again')).toMatchObject({ reason: { kind: 'completed' } })
    expect(lastResultText(model.requests[3])).toBe('Echo: after')
    expect(childrenWith(marker)).toHaveLength(1)
    expect(childrenWith(marker)[0]).not.toBe(pid)
  })

  test('a restart that fails is a tool error naming the server and why, and the turn goes on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'yoke-mcp-flaky-'))
    try {
      // Starts server-everything once; every later start exits at once, as a broken install would.
      const entry = join(dir, 'flaky.mjs')
      await writeFile(
        entry,
        [
          "import { existsSync, writeFileSync } from 'node:fs'",
          'if (existsSync(process.env.FLAG)) process.exit(3)',
          "writeFileSync(process.env.FLAG, '')",
          `await import(${JSON.stringify(pathToFileURL(everythingBin).href)})`,
        ].join('\n'),
      )
      const { agent, model, marker } = await world(
        [call('c1', 'echo', '{"message":"one"}'), text('ok'), call('c2', 'echo', '{"message":"two"}'), text('gone')],
        { entry, env: { FLAG: join(dir, 'started') } },
      )
      expect(await agent.run('first')).toMatchObject({ reason: { kind: 'completed' } })
      const [pid] = childrenWith(marker)
      if (pid === undefined) throw new Error('no child')
      process.kill(pid, 'SIGKILL')
      await until(() => !isAlive(pid) && childrenWith(marker).length === 0, 'the child to end')
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(await agent.run('second')).toMatchObject({ reason: { kind: 'completed' }, text: 'gone' })
      expect(lastResultText(model.requests[3])).toMatch(
        /^Tool error \(TOOL_FAILED\): MCP server "everything": initialize failed: /,
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
