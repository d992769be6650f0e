/**
 * Shared setup of the end-to-end loop suites: a harness
 * over the memory or the JSONL adapter with a scripted model, a fake clock and ids, an agent with
 * `verifyReconstruction: true`, the `echo` tool, and small readers of the log and the requests.
 * Every harness a suite opens is closed (and every JSONL directory removed) in `afterEach`.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { z } from 'zod'
import {
  type Agent,
  type AgentErrorPayload,
  type AgentOptions,
  type AgentStatus,
  createHarness,
  defineTool,
  type Harness,
  type HarnessOptions,
  type Message,
  type ModelRequest,
  type SessionEvent,
  type ToolDefinition,
} from 'yoke'
import {
  type FakeClock,
  fakeClock,
  fakeIds,
  type ScriptEntry,
  type ScriptedModel,
  type ScriptedModelOptions,
  scriptedModel,
} from 'yoke/testing'
import { type RecordingLogger, recordingLogger } from '../../helpers/recording-logger.js'

/** The two persistence adapters every scenario runs over. */
export const adapterKinds = ['memory', 'jsonl'] as const

/** One of {@link adapterKinds}. */
export type AdapterKind = (typeof adapterKinds)[number]

/** What a scenario harness takes beyond the fixed clock, ids, logger and persistence. */
export interface ScenarioHarnessOptions
  extends Omit<HarnessOptions, 'model' | 'persistence' | 'clock' | 'ids' | 'logger'> {
  /** The scripted model's entries (default none). */
  readonly script?: readonly ScriptEntry[]
  /** The scripted model's provider and model ids. */
  readonly modelOptions?: ScriptedModelOptions
  /**
   * How the scripted model is wired: as the harness `model` option (`'route'`, whose provider and
   * model become the agents' option defaults), or only registered in the global layer of the model
   * registry (`'registry'`), so agents get no provider or model by default.
   *
   * @default 'route'
   */
  readonly wiring?: 'route' | 'registry'
}

/** What a scenario agent takes: the harness options plus the agent options. */
export interface ScenarioAgentOptions extends ScenarioHarnessOptions {
  /** Agent options over the harness defaults; `verifyReconstruction` defaults to `true`. */
  readonly options?: AgentOptions
}

/** One scenario's harness. */
export interface ScenarioWorld {
  readonly harness: Harness
  readonly model: ScriptedModel
  readonly logger: RecordingLogger
  /** The harness clock (fake: advance it with `runAll`). */
  readonly clock: FakeClock
}

/** One scenario's harness and agent, with its `agent/status` and `agent/error` recorders. */
export interface ScenarioAgent extends ScenarioWorld {
  readonly agent: Agent
  /** Every `agent/status` the agent emitted, in order. */
  readonly statuses: AgentStatus[]
  /** Every `agent/error` the agent emitted, in order. */
  readonly errors: AgentErrorPayload[]
}

/** The factory of one `describe.each` branch. */
export interface Scenarios {
  readonly kind: AdapterKind
  /**
   * Opens a harness over this branch's adapter (closed in `afterEach`).
   *
   * @param options - script, tools, plugins, …
   */
  world(options?: ScenarioHarnessOptions): Promise<ScenarioWorld>
  /**
   * Opens a harness and creates one agent with `verifyReconstruction: true` unless overridden.
   *
   * @param options - harness and agent options
   */
  agent(options?: ScenarioAgentOptions): Promise<ScenarioAgent>
}

/**
 * The scenario factory of one adapter branch; registers the `afterEach` that closes its harnesses.
 *
 * @param kind - `'memory'` or `'jsonl'`
 * @returns the factory
 */
export function useScenarios(kind: AdapterKind): Scenarios {
  const harnesses: Harness[] = []
  const dirs: string[] = []
  afterEach(async () => {
    for (const harness of harnesses.splice(0)) await harness.close().catch(() => undefined)
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
  })
  const world = async (options: ScenarioHarnessOptions = {}): Promise<ScenarioWorld> => {
    const { script = [], modelOptions, wiring = 'route', ...rest } = options
    const model = scriptedModel(script, modelOptions)
    const logger = recordingLogger()
    const clock = fakeClock()
    const persistence = kind === 'jsonl' ? { persistence: { dir: await freshDir(dirs) } } : {}
    const route = wiring === 'route' ? { model } : {}
    const harness = await createHarness({ ...rest, ...persistence, ...route, clock, ids: fakeIds(), logger })
    harnesses.push(harness)
    if (wiring === 'registry') harness.ctx.models.register(model)
    return { harness, model, logger, clock }
  }
  return {
    kind,
    world,
    async agent(options: ScenarioAgentOptions = {}): Promise<ScenarioAgent> {
      const { options: agentOptions, ...harnessOptions } = options
      const opened = await world(harnessOptions)
      const agent = await opened.harness.createAgent({ options: { verifyReconstruction: true, ...agentOptions } })
      const statuses: AgentStatus[] = []
      const errors: AgentErrorPayload[] = []
      agent.ctx.on('agent/status', (payload) => {
        statuses.push(payload.status)
      })
      agent.ctx.on('agent/error', (payload) => {
        errors.push(payload)
      })
      return { ...opened, agent, statuses, errors }
    },
  }
}

async function freshDir(dirs: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-scenario-'))
  dirs.push(dir)
  return dir
}

/** How many times `echo` ran since the module loaded; read differences, never absolute values. */
export const echoRuns = { count: 0 }

/** The scenarios' `echo` tool: returns `echo: <text>`. */
export const echo: ToolDefinition = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  input: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: (args) => {
    echoRuns.count++
    return `echo: ${args.text}`
  },
})

/**
 * The event types of a log, in seq order.
 *
 * @param events - the events
 */
export function types(events: readonly SessionEvent[]): string[] {
  return events.map((event) => event.type)
}

/**
 * The event types of a log without `assistant/chunk`s.
 *
 * @param events - the events
 */
export function withoutChunks(events: readonly SessionEvent[]): string[] {
  return types(events).filter((type) => type !== 'assistant/chunk')
}

/**
 * The events of one type.
 *
 * @param events - the events
 * @param type - the type
 */
export function ofType(events: readonly SessionEvent[], type: string): SessionEvent[] {
  return events.filter((event) => event.type === type)
}

/**
 * The `data` of every event of one type.
 *
 * @param events - the events
 * @param type - the type
 */
export function dataOf<T = Record<string, unknown>>(events: readonly SessionEvent[], type: string): T[] {
  return ofType(events, type).map((event) => event.data as unknown as T)
}

/**
 * A message as `role: text` (text blocks joined; a tool result as `tool-result <id>: <text>`).
 *
 * @param message - the message
 */
export function line(message: Message): string {
  const parts = message.content.map((block) => {
    if (block.type === 'text') return block.text
    if (block.type === 'tool-call') return `call ${block.id}`
    if (block.type === 'tool-result')
      return `result ${block.toolCallId}: ${block.content.map((item) => (item.type === 'text' ? item.text : item.type)).join('')}`
    return block.type
  })
  return `${message.role}: ${parts.join(' | ')}`
}

/**
 * The messages of a request as {@link line}s.
 *
 * @param request - a recorded request
 */
export function lines(request: ModelRequest | undefined): string[] {
  return (request?.messages ?? []).map(line)
}

/**
 * The texts of the `user/message`s of a log, in order.
 *
 * @param events - the events
 */
export function userTexts(events: readonly SessionEvent[]): string[] {
  return dataOf<Message>(events, 'user/message').map((message) => line(message).slice('user: '.length))
}

/**
 * Resolves when the harness commits the first event matching `predicate` (checked from now on).
 *
 * @param harness - the harness
 * @param predicate - which event
 */
export function untilEvent(harness: Harness, predicate: (event: SessionEvent) => boolean): Promise<SessionEvent> {
  return new Promise((resolve) => {
    const stop = harness.on('session/event', ({ event }) => {
      if (!predicate(event)) return
      stop()
      resolve(event)
    })
  })
}

/**
 * Resolves when an event of `type` is committed.
 *
 * @param harness - the harness
 * @param type - the event type
 */
export function untilType(harness: Harness, type: string): Promise<SessionEvent> {
  return untilEvent(harness, (event) => event.type === type)
}

/**
 * Settles every pending microtask and macrotask once (a `setTimeout(0)` hop).
 */
export function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0))
}

/**
 * Resolves once a `text-delta` chunk is logged: a `hang()` reply is then streaming its "partial".
 *
 * @param harness - the harness
 */
export function untilStreaming(harness: Harness): Promise<SessionEvent> {
  return untilEvent(
    harness,
    (event) =>
      event.type === 'assistant/chunk' && (event.data as { chunk: { type: string } }).chunk.type === 'text-delta',
  )
}
