/**
 * Prompts queued before a crash: a real child process (`queued-child.ts`) queues `run()` prompts
 * and a steer behind a hanging turn over a JSONL dir and is killed with SIGKILL. The parent resumes
 * with `queued: 'keep'` (they run first, with their original queue times) or `'discard'` (a durable
 * canceled splice; they never run, and neither a later resume nor a crash right after the discard
 * brings them back). Also `harness.readSession` over the crashed log: nothing written.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { createHarness, type Harness, jsonlPersistence, type SessionEvent, type UserMessage } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { type Bundle, bundle, root } from '../helpers/child-process.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import type { QueuedChildOptions } from './queued-child.js'

let child: Bundle | undefined
const dirs: string[] = []
const harnesses: Harness[] = []

beforeAll(async () => {
  child = await bundle('test/agent/queued-child.ts')
}, 30_000)

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

afterAll(async () => {
  await child?.remove()
})

interface Marker {
  readonly reached: string
  readonly lastSeq: number
}

/** Spawns the child, waits for its marker, kills it with SIGKILL and waits until it is reaped. */
async function killAtMarker(options: QueuedChildOptions): Promise<Marker> {
  const env = { ...process.env }
  delete env['NODE_OPTIONS']
  const process_: ChildProcess = spawn(process.execPath, [(child as Bundle).file, JSON.stringify(options)], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  let pending = ''
  process_.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    process_.once('close', (code, signal) => resolve({ code, signal }))
  })
  const first = new Promise<Marker | undefined>((resolve) => {
    process_.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      const newline = pending.indexOf('\n')
      if (newline === -1) return
      process_.kill('SIGKILL')
      resolve(JSON.parse(pending.slice(0, newline)) as Marker)
    })
    void closed.then(() => resolve(undefined))
  })
  const timer = setTimeout(() => process_.kill('SIGKILL'), 10_000)
  const marker = await first
  const exit = await closed
  clearTimeout(timer)
  if (marker === undefined) throw new Error(`the child ended before its marker: ${JSON.stringify(exit)}\n${stderr}`)
  expect(exit, stderr).toEqual({ code: null, signal: 'SIGKILL' })
  return marker
}

/** The log as it is on disk (a bare adapter: no repair, no lease). */
async function storedLog(dir: string, id: string): Promise<readonly SessionEvent[]> {
  const adapter = jsonlPersistence({ dir })
  try {
    return (await adapter.load(id)).events
  } finally {
    await adapter.close()
  }
}

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-queued-'))
  dirs.push(dir)
  return dir
}

/** A harness over `dir` whose model answers `replies`, with a fake clock at `now`. */
async function harnessOver(dir: string, replies: readonly string[], now: number) {
  const model = scriptedModel(replies.map((reply) => text(reply)))
  const clock = fakeClock({ now })
  const harness = await createHarness({ persistence: { dir }, model, clock, ids: fakeIds(), logger: recordingLogger() })
  harnesses.push(harness)
  return { harness, model, clock }
}

function textOf(message: UserMessage | undefined): string | undefined {
  const block = message?.content[0]
  return block?.type === 'text' ? block.text : undefined
}

/** The user texts of the `agent/inbox/spliced` canceled splices in `events`, per list. */
function canceledSplices(events: readonly SessionEvent[]): unknown[] {
  return events
    .filter((event) => event.type === 'agent/inbox/spliced')
    .map((event) => event.data as { target: string; removedCount?: number; outcome?: string })
    .filter((data) => data.outcome === 'canceled')
    .map(({ target, removedCount }) => ({ target, removedCount }))
}

const id = 'chat-1'

describe('prompts queued before a SIGKILL', () => {
  test("queued: 'keep' (the default) lists them with their queue time and age, and runs them before the next prompt", async () => {
    const dir = await freshDir()
    const marker = await killAtMarker({ dir, sessionId: id, scenario: 'queue' })
    expect(marker.reached).toBe('queued')
    const { harness, model, clock } = await harnessOver(dir, ['a1', 'a2', 'a3'], 61_000)
    const agent = await harness.resumeAgent(id)
    expect(
      agent.inbox.list().map((entry) => [entry.target, textOf(entry.message), entry.queuedAt, entry.ageMs]),
    ).toEqual([
      ['next-step', 's1', 1800, 59_200],
      ['next-turn', 'q1', 1500, 59_500],
      ['next-turn', 'q2', 2000, 59_000],
    ])
    expect(Object.isFrozen(agent.inbox.list())).toBe(true)
    await clock.advance(1000)
    expect(agent.inbox.list().map((entry) => entry.ageMs)).toEqual([60_200, 60_500, 60_000])

    const result = await agent.run('new')
    // Turn 1 was interrupted; turn 2 claims s1 and q1, turn 3 q2, and only turn 4 the new prompt.
    expect(result).toMatchObject({ turn: 4, reason: { kind: 'completed' }, text: 'a3' })
    const lastUsers = model.requests.map((request) => {
      const users = request.messages.filter((message) => message.role === 'user')
      return users.slice(-2).map((message) => textOf(message as UserMessage))
    })
    expect(lastUsers).toEqual([
      ['s1', 'q1'],
      ['q1', 'q2'],
      ['q2', 'new'],
    ])
    expect(agent.inbox.list()).toEqual([])
  })

  test("queued: 'discard' logs one canceled splice per list, durable when the resume resolves; they never run, and a later resume does not see them", async () => {
    const dir = await freshDir()
    const marker = await killAtMarker({ dir, sessionId: id, scenario: 'queue' })
    const cut = await storedLog(dir, id)
    expect(cut).toHaveLength(marker.lastSeq + 1)
    const { harness, model } = await harnessOver(dir, ['fresh'], 61_000)
    const discarded: string[] = []
    harness.on('agent/inbox/discarded', ({ message }) => discarded.push(textOf(message) ?? '?'))
    const agent = await harness.resumeAgent(id, { queued: 'discard' })
    expect(agent.inbox.hasPending).toBe(false)
    expect(agent.inbox.list()).toEqual([])
    expect(discarded).toEqual(['s1', 'q1', 'q2'])
    // Durable before resumeAgent resolved: the file already holds both splices.
    const stored = await storedLog(dir, id)
    expect(canceledSplices(stored.slice(cut.length))).toEqual([
      { target: 'next-step', removedCount: 1 },
      { target: 'next-turn', removedCount: 2 },
    ])

    const result = await agent.run('new')
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'fresh' })
    const users = model.requests[0]?.messages.filter((message) => message.role === 'user')
    expect(users?.map((message) => textOf(message as UserMessage))).toEqual(['first', 'new'])
    await harness.close()

    const again = await harnessOver(dir, [], 70_000)
    const resumed = await again.harness.resumeAgent(id)
    expect(resumed.inbox.hasPending).toBe(false)
  })

  test('a crash right after a discarding resume does not bring the prompts back', async () => {
    const dir = await freshDir()
    await killAtMarker({ dir, sessionId: id, scenario: 'queue' })
    const marker = await killAtMarker({ dir, sessionId: id, scenario: 'discard' })
    expect(marker.reached).toBe('discarded')
    const stored = await storedLog(dir, id)
    expect(stored).toHaveLength(marker.lastSeq + 1)
    expect(canceledSplices(stored)).toEqual([
      { target: 'next-step', removedCount: 1 },
      { target: 'next-turn', removedCount: 2 },
    ])
    const { harness } = await harnessOver(dir, [], 95_000)
    const agent = await harness.resumeAgent(id, { queued: 'keep' })
    expect(agent.inbox.list()).toEqual([])
  })

  test('readSession reads the crashed log (closers in memory, repairPending) without writing a byte', async () => {
    const dir = await freshDir()
    const marker = await killAtMarker({ dir, sessionId: id, scenario: 'queue' })
    const file = join(dir, `${id}.jsonl`)
    const size = (await stat(file)).size
    const { harness } = await harnessOver(dir, [], 61_000)
    const history = await harness.readSession(id)
    expect(history).toMatchObject({ id, live: false, repairPending: true })
    expect(history.events.slice(marker.lastSeq + 1).map((event) => event.type)).toEqual(['step/end', 'turn/end'])
    expect(history.messages.map((message) => textOf(message as UserMessage))).toEqual(['first'])
    expect((await stat(file)).size).toBe(size)
    expect(await storedLog(dir, id)).toHaveLength(marker.lastSeq + 1)
    expect(harness.sessions.get(id)).toBeUndefined()
    // The read took no lease: a resume in the same harness still works.
    expect((await harness.resumeAgent(id)).inbox.nextTurn).toHaveLength(2)
  })
})
