/**
 * Crash tests through the agent loop: a real child process (`crash-child.ts`) drives an agent over a JSONL dir and is killed
 * with SIGKILL at a deterministic point it announces on stdout, mid-stream or inside a tool body.
 * The parent then resumes the agent with a fresh harness and checks the durable prefix, the
 * crash-repair closers (exact events), the next turn's number and its request's tool pairing.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, type Harness, jsonlPersistence, type ModelRequest, type SessionEvent } from 'yoke'
import { fakeIds, scriptedModel, text } from 'yoke/testing'
import { type Bundle, bundle, root } from '../../helpers/child-process.js'
import { recordingLogger } from '../../helpers/recording-logger.js'
import type { CrashChildOptions } from './crash-child.js'

let childCommand: string[] = []
let crashChild: Bundle | undefined
const dirs: string[] = []
const harnesses: Harness[] = []

beforeAll(async () => {
  crashChild = await bundle('test/agent/loop/crash-child.ts')
  childCommand = [crashChild.file]
}, 30_000)

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

afterAll(async () => {
  await crashChild?.remove()
})

/** The child's stdout markers. */
interface Marker {
  readonly reached: string
  readonly lastSeq?: number
}

/** Spawns the child, waits for its first marker, kills it with SIGKILL and waits until it is reaped. */
async function killAtMarker(options: CrashChildOptions): Promise<{ marker: Marker; markers: Marker[] }> {
  const env = { ...process.env }
  delete env['NODE_OPTIONS']
  const child: ChildProcess = spawn(process.execPath, [...childCommand, JSON.stringify(options)], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const markers: Marker[] = []
  let stderr = ''
  let pending = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }))
  })
  const first = new Promise<Marker | undefined>((resolve) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
        const marker = JSON.parse(pending.slice(0, newline)) as Marker
        pending = pending.slice(newline + 1)
        markers.push(marker)
        if (markers.length === 1) {
          child.kill('SIGKILL')
          resolve(marker)
        }
      }
    })
    void closed.then(() => resolve(undefined))
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  const marker = await first
  const exit = await closed
  clearTimeout(timer)
  if (marker === undefined) throw new Error(`the child ended before its marker: ${JSON.stringify(exit)}\n${stderr}`)
  expect(exit, stderr).toEqual({ code: null, signal: 'SIGKILL' })
  return { marker, markers }
}

/** The log as the dead child left it on disk (read by a bare adapter: no repair, no lease). */
async function durableLog(dir: string, id: string): Promise<readonly SessionEvent[]> {
  const adapter = jsonlPersistence({ dir })
  try {
    const log = await adapter.load(id)
    expect(log.torn).toBeUndefined()
    return log.events
  } finally {
    await adapter.close()
  }
}

/** The tools of the child, by name; the resumed harness offers them again but the model never calls them. */
const tools = ['slow', 'probe'].map((name) =>
  defineTool({
    name,
    description: `${name} (resumed side)`,
    input: z.object({}),
    execute: () => `${name} must not run after resume`,
  }),
)

/** Resumes `id` from `dir` in a fresh harness whose model answers `reply`. */
async function resumeFrom(dir: string, id: string, reply: string) {
  const model = scriptedModel([text(reply)])
  const logger = recordingLogger()
  const harness = await createHarness({ persistence: { dir }, model, tools, logger, ids: fakeIds() })
  harnesses.push(harness)
  const agent = await harness.resumeAgent(id, { options: { verifyReconstruction: true } })
  // The dead child's lock (same host, dead pid) was taken over, with a warning.
  expect(
    logger
      .at('warn')
      .map((record) => [record.message.includes('took over the stale lock'), record.fields?.['sessionId']]),
  ).toEqual([[true, id]])
  return { harness, agent, model }
}

/** Every tool-call id in the request's messages, and every tool-result id, in order. */
function pairing(request: ModelRequest | undefined): { calls: string[]; results: string[] } {
  const messages = request?.messages ?? []
  const calls = messages.flatMap((message) =>
    message.role === 'assistant'
      ? message.content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : []))
      : [],
  )
  const results = messages.flatMap((message) =>
    message.content.flatMap((block) =>
      typeof block !== 'string' && block.type === 'tool-result' ? [block.toolCallId] : [],
    ),
  )
  return { calls, results }
}

const outcomeUnknownText =
  'This tool call started, but the session stopped before its result was saved, so the outcome is unknown and it may already have changed something. Do not simply repeat it: call it again only if it just reads or is safe to repeat; otherwise check the current state first or ask the user.'
const notStartedText =
  'This tool call never started: the session stopped before the call was recorded, so nothing ran. Call the tool again if you still need its result.'

/** The synthetic `tool/result` crash-repair closer for `callId` at `seq`. */
function syntheticResult(seq: number, time: number, callId: string, callSeq: number | undefined): SessionEvent {
  const code = callSeq === undefined ? 'TOOL_NOT_STARTED' : 'TOOL_OUTCOME_UNKNOWN'
  return {
    type: 'tool/result',
    seq,
    time,
    data: {
      turn: 1,
      step: 1,
      message: {
        id: `interrupted:${callId}:${seq}`,
        role: 'user',
        source: { kind: 'tool', callId },
        content: [
          {
            type: 'tool-result',
            toolCallId: callId,
            isError: true,
            content: [{ type: 'text', text: callSeq === undefined ? notStartedText : outcomeUnknownText }],
          },
        ],
      },
      error: { name: 'InterruptedToolCallError', code },
      meta: { synthetic: true },
    },
    surfaceOp: 'append',
    ...(callSeq === undefined ? {} : { sourceEventSeqs: [callSeq] }),
  }
}

/** step/end and turn/end closers for the open step of `turn`, from `seq`. */
function stepAndTurnClosers(seq: number, time: number, turn: number, step: number): SessionEvent[] {
  return [
    { type: 'step/end', seq, time, data: { turn, step, meta: { synthetic: true } } },
    {
      type: 'turn/end',
      seq: seq + 1,
      time,
      data: { turn, reason: { kind: 'interrupted' }, meta: { synthetic: true } },
    },
  ]
}

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-agent-crash-'))
  dirs.push(dir)
  return dir
}

describe('SIGKILL through the agent loop, then resumeAgent', () => {
  test('killed while the model streams (turn 2): step/end and turn/end interrupted close it; the next run is turn 3', async () => {
    const dir = await freshDir()
    const id = 'crash-stream'
    const { marker } = await killAtMarker({ dir, sessionId: id, scenario: 'stream' })
    expect(marker.reached).toBe('streaming')
    const cut = await durableLog(dir, id)
    // Everything the child had appended at the marker is durable: turn 1 closed, turn 2 open mid-stream.
    expect(cut).toHaveLength((marker.lastSeq ?? -1) + 1)
    const last = cut.at(-1) as SessionEvent
    expect(last).toMatchObject({
      type: 'assistant/chunk',
      data: { turn: 2, step: 1, chunk: { type: 'text-delta', index: 0, text: 'er' } },
    })
    const turn2 = cut.slice(
      cut.findIndex((event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === 2),
    )
    expect(turn2.map((event) => event.type)).toEqual([
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      ...Array.from({ length: 5 }, () => 'assistant/chunk'),
    ])

    const { harness, agent, model } = await resumeFrom(dir, id, 'recovered')
    const events = agent.session.events
    expect(events.slice(0, cut.length)).toEqual(cut)
    expect(events.slice(cut.length, -1)).toEqual(stepAndTurnClosers(cut.length, last.time, 2, 1))
    expect(events.at(-1)?.type).toBe('session/end-seed')
    // Interrupted by the crash, not by the turn signal: no partial assistant/message anchor.
    expect(events.filter((event) => event.type === 'assistant/message')).toHaveLength(1)
    expect(model.requests).toHaveLength(0)

    const result = await agent.run('next')
    expect(result).toMatchObject({ turn: 3, reason: { kind: 'completed' }, text: 'recovered' })
    const request = model.requests[0]
    expect(request?.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', [{ type: 'text', text: 'first question' }]],
      ['assistant', [{ type: 'text', text: 'first answer' }]],
      ['user', [{ type: 'text', text: 'second question' }]],
      ['user', [{ type: 'text', text: 'next' }]],
    ])
    expect(pairing(request)).toEqual({ calls: [], results: [] })
    await harness.close()
    await expectBalancedOnDisk(dir, id, agent.session.length - 1)
  })

  test('killed inside a tool body with a second call queued: TOOL_OUTCOME_UNKNOWN and TOOL_NOT_STARTED results; the next run is turn 2', async () => {
    const dir = await freshDir()
    const id = 'crash-tool'
    const { marker, markers } = await killAtMarker({ dir, sessionId: id, scenario: 'tool' })
    expect(marker.reached).toBe('tool-body')
    expect(markers.map((entry) => entry.reached)).not.toContain('probe-ran')
    const cut = await durableLog(dir, id)
    expect(cut).toHaveLength((marker.lastSeq ?? -1) + 1)
    // c1's tool/call is durable before its body runs; c2 (maxParallelToolCalls 1) was never started.
    const last = cut.at(-1) as SessionEvent
    expect(last).toMatchObject({
      type: 'tool/call',
      data: { turn: 1, step: 1, callId: 'c1', name: 'slow', arguments: '{}' },
    })
    expect(cut.filter((event) => event.type === 'tool/call')).toHaveLength(1)
    expect(cut.at(-2)).toMatchObject({
      type: 'assistant/message',
      data: { message: { content: [{ id: 'c1' }, { id: 'c2' }] } },
    })

    const { harness, agent, model } = await resumeFrom(dir, id, 'recovered')
    const events = agent.session.events
    expect(events.slice(0, cut.length)).toEqual(cut)
    const at = cut.length
    expect(events.slice(at, -1)).toEqual([
      syntheticResult(at, last.time, 'c1', last.seq),
      syntheticResult(at + 1, last.time, 'c2', undefined),
      ...stepAndTurnClosers(at + 2, last.time, 1, 1),
    ])
    expect(events.at(-1)?.type).toBe('session/end-seed')

    const result = await agent.run('next')
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'recovered' })
    const request = model.requests[0]
    expect(pairing(request)).toEqual({ calls: ['c1', 'c2'], results: ['c1', 'c2'] })
    expect(request?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'user', 'user'])
    expect(request?.messages[2]?.content).toEqual([
      { type: 'tool-result', toolCallId: 'c1', isError: true, content: [{ type: 'text', text: outcomeUnknownText }] },
    ])
    expect(request?.messages[3]?.content).toEqual([
      { type: 'tool-result', toolCallId: 'c2', isError: true, content: [{ type: 'text', text: notStartedText }] },
    ])
    expect(request?.messages[4]?.content).toEqual([{ type: 'text', text: 'next' }])
    await harness.close()
    await expectBalancedOnDisk(dir, id, agent.session.length - 1)
  })
})

/** After the resumed harness closed: the stored log is whole (every event through `lastSeq`) and needs no repair. */
async function expectBalancedOnDisk(dir: string, id: string, lastSeq: number): Promise<void> {
  const harness = await createHarness({ persistence: { dir }, logger: recordingLogger() })
  try {
    const inspected = await harness.persistence.inspect(id)
    expect(inspected.repairPending).toBe(false)
    expect(inspected.events.at(-1)).toMatchObject({
      seq: lastSeq,
      type: 'turn/end',
      data: { reason: { kind: 'completed' } },
    })
  } finally {
    await harness.close()
  }
}

describe("SIGKILL at durability 'turn', then resumeAgent", () => {
  test('killed inside a tool body: the calls written (not synced) by the checkpoint before it are kept; the turn is closed and the next run is turn 2', async () => {
    const dir = await freshDir()
    const id = 'crash-turn-durability'
    const { marker } = await killAtMarker({ dir, sessionId: id, scenario: 'tool', durability: 'turn' })
    expect(marker.reached).toBe('tool-body')
    const cut = await durableLog(dir, id)
    // A killed process loses nothing its checkpoints wrote: the page cache outlives it.
    expect(cut).toHaveLength((marker.lastSeq ?? -1) + 1)
    const last = cut.at(-1) as SessionEvent
    expect(last).toMatchObject({ type: 'tool/call', data: { turn: 1, step: 1, callId: 'c1', name: 'slow' } })

    const { harness, agent, model } = await resumeFrom(dir, id, 'recovered')
    const events = agent.session.events
    expect(events.slice(0, cut.length)).toEqual(cut)
    const at = cut.length
    expect(events.slice(at, -1)).toEqual([
      syntheticResult(at, last.time, 'c1', last.seq),
      syntheticResult(at + 1, last.time, 'c2', undefined),
      ...stepAndTurnClosers(at + 2, last.time, 1, 1),
    ])
    const result = await agent.run('next')
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'recovered' })
    expect(pairing(model.requests[0])).toEqual({ calls: ['c1', 'c2'], results: ['c1', 'c2'] })
    await harness.close()
    await expectBalancedOnDisk(dir, id, agent.session.length - 1)
  })
})
