/**
 * Helpers of the loop-side tool tests (through `createHarness` + `createAgent`
 * and a scripted model, with `verifyReconstruction: true`): one world per test, closed after it,
 * multi-call replies, polling on real promise turns, and compact log descriptions.
 *
 * @module
 */
import { afterEach, expect } from 'vitest'
import {
  type Agent,
  type AgentOptions,
  createHarness,
  defineTool,
  type Harness,
  type HarnessOptions,
  type Message,
  type ModelRequest,
  type SessionEvent,
  type ToolDefinition,
  type ToolSpec,
} from 'yoke'
import {
  type FakeClock,
  fakeClock,
  fakeIds,
  type ScriptedModel,
  type ScriptedReply,
  type ScriptEntry,
  scriptedModel,
} from 'yoke/testing'
import { describeEvents } from './scheduler/scheduler-helpers.js'

const open: Harness[] = []

afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close()
})

/** One loop test world: a fake clock at 0, fake ids, memory persistence, one agent. */
export interface LoopWorld {
  /** The harness clock. */
  readonly clock: FakeClock
  /** The scripted model (its `requests` are the loop's requests). */
  readonly model: ScriptedModel
  /** The harness. */
  readonly harness: Harness
  /** The agent, created with `verifyReconstruction: true` plus the world's options. */
  readonly agent: Agent
}

/** What a {@link loopWorld} is built from besides the script. */
export interface LoopWorldOptions {
  /** Global tools (the harness `tools` option). */
  readonly tools?: readonly ToolDefinition[]
  /** Agent option overrides. */
  readonly options?: AgentOptions
  /** More harness options (plugins, patches). */
  readonly harness?: Omit<HarnessOptions, 'model' | 'clock' | 'ids' | 'tools'>
}

/**
 * Builds a {@link LoopWorld}; the harness is closed after the test.
 *
 * @param script - the scripted model's replies
 * @param options - tools, agent options and more harness options
 */
export async function loopWorld(script: readonly ScriptEntry[], options: LoopWorldOptions = {}): Promise<LoopWorld> {
  const clock = fakeClock({ now: 0 })
  const model = scriptedModel(script)
  const harness = await createHarness({
    ...options.harness,
    model,
    clock,
    ids: fakeIds(),
    ...(options.tools === undefined ? {} : { tools: options.tools }),
  })
  open.push(harness)
  const agent = await harness.createAgent({ options: { verifyReconstruction: true, ...options.options } })
  return { clock, model, harness, agent }
}

/**
 * A reply holding several tool calls (finish `tool-calls`).
 *
 * @param calls - `[id, name, rawArguments?]` per call, in model order
 */
export function calls(...calls: readonly (readonly [string, string, string?])[]): ScriptedReply {
  return { toolCalls: calls.map(([id, name, rawArguments]) => ({ id, name, arguments: rawArguments ?? '{}' })) }
}

/** A raw-JSON-Schema tool overlaid with `extra` (default body: returns `'<name> ok'`). */
export function rawTool(name: string, extra: Partial<ToolSpec> = {}): ToolDefinition {
  return defineTool({
    name,
    description: `the ${name} tool`,
    input: { type: 'object' },
    execute: () => `${name} ok`,
    ...extra,
  } as ToolSpec)
}

/** Lets pending continuations run: `turns` macrotask turns. */
export async function settle(turns = 5): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/**
 * Waits (on real macrotask turns, never on the clock) until `condition()` holds.
 *
 * @param condition - what to wait for
 * @param what - named in the failure when it never holds
 */
export async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  for (let turn = 0; turn < 500; turn++) {
    if (condition()) return
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** The log without `assistant/chunk` events, from `fromSeq` on (`tool/call <id>`, `tool/result <id> <CODE>`, else the type). */
export function loopLog(agent: Agent, fromSeq = 0): string[] {
  return describeEvents(
    agent.session.events.filter((event) => event.seq >= fromSeq && event.type !== 'assistant/chunk'),
  )
}

/** The events of `type`, in order. */
export function eventsOf(agent: Agent, type: string): SessionEvent[] {
  return agent.session.events.filter((event) => event.type === type)
}

/** The seq right after the first `assistant/message` (where the tool events of step 1 begin). */
export function afterFirstAnchor(agent: Agent): number {
  const anchor = agent.session.events.find((event) => event.type === 'assistant/message')
  if (anchor === undefined) throw new Error('no assistant/message')
  return anchor.seq + 1
}

/** The `turn/end` payloads, in order. */
export function turnEnds(agent: Agent): unknown[] {
  return eventsOf(agent, 'turn/end').map((event) => event.data)
}

/** `'<callId>: <text>'` (`'<callId> error: <text>'` for an error) per tool-result block of a request, in order. */
export function requestToolResults(request: ModelRequest | undefined): string[] {
  if (request === undefined) throw new Error('no such request')
  return request.messages.flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === 'tool-result'
        ? [
            `${block.toolCallId}${block.isError ? ' error' : ''}: ${block.content.map((entry) => (entry.type === 'text' ? entry.text : `[${entry.type}]`)).join('')}`,
          ]
        : [],
    ),
  )
}

/** The texts of the user messages (not tool results) of a request, in order. */
export function requestUserTexts(request: ModelRequest | undefined): string[] {
  if (request === undefined) throw new Error('no such request')
  return request.messages
    .filter((message) => message.role === 'user' && message.source.kind !== 'tool')
    .map((message) => message.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join(''))
}

/** Every tool-call block of `messages` has exactly one matching tool-result message, right after its assistant message's results. */
export function expectPaired(messages: readonly Message[]): void {
  const callIds = messages.flatMap((message) =>
    message.role === 'assistant'
      ? message.content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : []))
      : [],
  )
  expect(callIds.length).toBeGreaterThan(0)
  for (const callId of callIds) {
    const answers = messages.filter((message) => message.source.kind === 'tool' && message.source.callId === callId)
    expect(answers, callId).toHaveLength(1)
  }
}
