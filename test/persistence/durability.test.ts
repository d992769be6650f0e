/**
 * How often a JSONL session syncs, through the public API: a harness over `jsonlPersistence`
 * whose file system counts `fsync` and `fdatasync`, driving two-step turns (a tool call, then
 * text) at `durability: 'step'` (the default) and `'turn'`; the bad values of the option.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, type Harness, InvalidOptionsError, jsonlPersistence } from 'yoke'
import { scriptedModel, text, tool } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { countingFileSystem, type FileSystemCalls, syncsOf } from '../helpers/counting-file-system.js'

const dirs: string[] = []
const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const total = syncsOf

/** A harness over a fresh JSONL dir with counted syncs; `seen` gets the log text a tool body saw. */
async function rig(turns: number, durability?: 'step' | 'turn', during?: (sessionId: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-durability-'))
  dirs.push(dir)
  const counts: FileSystemCalls = {}
  const seen: string[] = []
  const look = defineTool({
    name: 'look',
    description: 'Reads the session log as the file holds it now',
    input: z.object({}),
    execute: async (_args, context) => {
      seen.push(await readFile(join(dir, `${context.session.id}.jsonl`), 'utf8'))
      await during?.(context.session.id)
      return 'looked'
    },
  })
  const harness = await createHarness({
    model: scriptedModel(Array.from({ length: turns }, () => [tool('look', {}), text('done')]).flat()),
    tools: [look],
    persistence: jsonlPersistence({ dir, fileSystem: countingFileSystem(counts) }),
    logger: recordingLogger(),
    ...(durability === undefined ? {} : { durability }),
  })
  harnesses.push(harness)
  return { dir, harness, counts, seen }
}

/** Runs `turns` two-step turns; the syncs each made. */
async function syncsPerTurn(
  run: (turn: number) => Promise<unknown>,
  counts: FileSystemCalls,
  turns: number,
): Promise<number[]> {
  const perTurn: number[] = []
  for (let turn = 1; turn <= turns; turn++) {
    const before = total(counts)
    await run(turn)
    perTurn.push(total(counts) - before)
  }
  return perTurn
}

describe("durability 'step' (the default)", () => {
  test('a continuing session syncs at most twice per step; the first turn of a fresh one adds one', async () => {
    const { harness, counts } = await rig(4)
    const agent = await harness.createAgent()
    const perTurn = await syncsPerTurn(
      async (turn) => {
        const result = await agent.run(`question ${turn}`)
        expect(result.reason).toEqual({ kind: 'completed' })
      },
      counts,
      4,
    )
    // Two steps per turn: before each request, before the tool, at turn end; the flush between
    // the steps writes and shares the next request's sync.
    expect(perTurn.slice(1)).toEqual([4, 4, 4])
    // The first turn creates the log: its first batch is published with the file's and the
    // directory's fsync, where a continuing turn makes one fdatasync.
    expect(perTurn[0]).toBe(5)
    await agent.dispose()
  })

  test('every event is stored, in order, after each turn; the tool saw its call stored', async () => {
    const { dir, harness, seen } = await rig(2)
    const agent = await harness.createAgent()
    await agent.run('one')
    await agent.run('two')
    const stored = await jsonlPersistence({ dir }).load(agent.session.id)
    expect(stored.events.map((event) => JSON.stringify(event))).toEqual(
      agent.session.events.map((event) => JSON.stringify(event)),
    )
    expect(seen).toHaveLength(2)
    for (const text of seen) expect(text.trimEnd().split('\n').at(-1)).toContain('"type":"tool/call"')
    await agent.dispose()
  })
})

describe("durability 'turn'", () => {
  test('one sync per continuing turn, at its end; every checkpoint still writes in order', async () => {
    const { dir, harness, counts, seen } = await rig(4, 'turn')
    const agent = await harness.createAgent()
    const perTurn = await syncsPerTurn(
      async (turn) => {
        const result = await agent.run(`question ${turn}`)
        expect(result.reason).toEqual({ kind: 'completed' })
      },
      counts,
      4,
    )
    expect(perTurn.slice(1)).toEqual([1, 1, 1])
    // The first batch still publishes the file with its header durably (file and directory fsync).
    expect(perTurn[0]).toBe(3)
    // Before each tool body ran, its call was written (not yet synced): a killed process keeps it.
    expect(seen).toHaveLength(4)
    for (const text of seen) expect(text.trimEnd().split('\n').at(-1)).toContain('"type":"tool/call"')
    const stored = await jsonlPersistence({ dir }).load(agent.session.id)
    expect(stored.events.map((event) => JSON.stringify(event))).toEqual(
      agent.session.events.map((event) => JSON.stringify(event)),
    )
    await agent.dispose()
  })

  test('an explicit flush syncs what the turn wrote unsynced, with no new event to write', async () => {
    const flushes: number[] = []
    const { harness, counts } = await rig(1, 'turn', async (sessionId) => {
      // The call was written by the checkpoint before the tool, unsynced: this flush syncs it.
      const before = total(counts)
      await harness.sessions.flush(sessionId)
      flushes.push(total(counts) - before)
    })
    const agent = await harness.createAgent()
    const before = total(counts)
    await agent.run('go')
    expect(flushes).toEqual([1])
    // The first batch's publication (file and directory), the flush in the tool, the turn end.
    expect(total(counts) - before).toBe(4)
    await agent.dispose()
  })

  test('a session appended outside a turn is synced by dispose', async () => {
    const { dir, harness, counts } = await rig(0, 'turn')
    const agent = await harness.createAgent()
    const message = (id: string) => ({
      id,
      role: 'user',
      content: [{ type: 'text', text: id }],
      source: { kind: 'user' },
    })
    agent.session.append('user/message', message('m0') as never, { surfaceOp: 'append' })
    await harness.sessions.flush(agent.session)
    const created = total(counts)
    // Written by the window, not synced (turn durability leaves that to a turn's end or a flush).
    agent.session.append('user/message', message('m1') as never, { surfaceOp: 'append' })
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(total(counts)).toBe(created)
    await agent.dispose()
    expect(total(counts)).toBe(created + 1)
    const stored = await jsonlPersistence({ dir }).load(agent.session.id)
    expect(stored.events).toHaveLength(agent.session.length)
  })
})

describe('the durability option', () => {
  test.each([['sometimes'], [''], [1], [null], [true], [{ mode: 'step' }]])(
    'rejects %j with InvalidOptionsError naming it',
    async (value) => {
      const error = await rejectionOf(createHarness({ durability: value as never }))
      expect(InvalidOptionsError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'INVALID_OPTIONS', field: 'durability', value })
      expect((error as Error).message).toContain("must be 'step' or 'turn'")
    },
  )

  test.each([['step'], ['turn']])('accepts %s, also with memory persistence', async (durability) => {
    const harness = await createHarness({
      durability: durability as 'step' | 'turn',
      model: scriptedModel([text('ok')]),
    })
    harnesses.push(harness)
    const agent = await harness.createAgent()
    expect((await agent.run('hi')).text).toBe('ok')
    await agent.dispose()
  })
})
