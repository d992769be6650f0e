/**
 * Helpers of the scheduler suites: a real harness (fake clock at 0, fake ids, memory persistence)
 * and a real session with turn 1 step 1 opened by hand, an agent-scoped context, a hand-built
 * {@link ToolStepContext} (checkpoint = `sessions.flush`, a recording `insertContext`, the real
 * approval broker), live-event recording, gated bodies, and compact log descriptions.
 *
 * @module
 */
import { afterEach } from 'vitest'
import {
  type Context,
  createApprovalBroker,
  createHarness,
  defineTool,
  type Harness,
  type HarnessOptions,
  type JsonObject,
  runToolCalls,
  type Session,
  type SessionEvent,
  type ToolDefinition,
  type ToolRegistry,
  type ToolResultData,
  type ToolSpec,
  type ToolsProgressPayload,
  type ToolsResultPayload,
  type ToolStepContext,
  services,
} from 'yoke'
import {
  defaultToolRunOptions,
  type ToolAgent,
  type ToolContextMessage,
  type ToolRunOptions,
  type ToolsAbandonedPayload,
  type ToolStepReport,
} from '../../../src/tools/index.js'
import { type FakeClock, fakeClock, fakeIds } from 'yoke/testing'
import { recordingLogger } from '../../helpers/recording-logger.js'
import { AM, SS, TS } from '../../session/builders.js'
import { append, appendAll } from '../../session/session-helpers.js'

const open: Harness[] = []

afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close()
})

/** Lets every pending promise continuation run (one macrotask turn, a few times over). */
export async function settle(turns = 3): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** A tool-call block of the assistant message. */
export interface CallBlock {
  readonly type: 'tool-call'
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/**
 * A tool-call block.
 *
 * @param id - the call id
 * @param name - the tool name
 * @param args - the raw argument text (default `'{}'`)
 */
export function block(id: string, name: string, args = '{}'): CallBlock {
  return { type: 'tool-call', id, name, arguments: args }
}

/** A raw-JSON-Schema tool overlaid with `extra` (default body: returns its name). */
export function tool(name: string, extra: Partial<ToolSpec> = {}): ToolDefinition {
  return defineTool({
    name,
    description: `the ${name} tool`,
    input: { type: 'object' },
    execute: () => name,
    ...extra,
  } as ToolSpec)
}

/** Everything live the step's listeners heard, in order. */
export interface LiveRecord {
  /** Each `tools/result`. */
  readonly results: ToolsResultPayload[]
  /** Each `tools/progress`. */
  readonly progress: ToolsProgressPayload[]
  /** Each `tools/abandoned`. */
  readonly abandoned: ToolsAbandonedPayload[]
}

/** One scheduler test world. */
export interface SchedulerWorld {
  /** The harness clock. */
  readonly clock: FakeClock
  /** The harness. */
  readonly harness: Harness
  /** The agent's session (turn 1 step 1 open). */
  readonly session: Session
  /** The agent stand-in (`{ id, session }`, the scope key of `ctx`). */
  readonly agent: ToolAgent
  /** The agent-scoped context. */
  readonly ctx: Context
  /** The tool registry view of `ctx` (registers in the agent's layer). */
  readonly tools: ToolRegistry
  /** The turn controller. */
  readonly turn: AbortController
  /** What `insertContext` received, in order. */
  readonly contexts: ToolContextMessage[]
  /** The live events. */
  readonly live: LiveRecord
  /** How many times the checkpoint ran. */
  readonly checkpoints: { count: number }
  /** The step context for `options` overrides (and a replacement checkpoint / insertContext / approvals). */
  stepContext(overrides?: StepOverrides): ToolStepContext
  /** Appends the assistant message holding `blocks`, then runs them. */
  run(blocks: readonly CallBlock[], overrides?: StepOverrides): Promise<ToolStepReport>
}

/** What a test may replace in the step context. */
export interface StepOverrides {
  /** Option overrides. */
  readonly options?: Partial<ToolRunOptions>
  /** Replaces the default members. */
  readonly step?: Partial<Omit<ToolStepContext, 'options'>>
}

/** Builds a {@link SchedulerWorld}. */
export async function schedulerWorld(options: HarnessOptions = {}): Promise<SchedulerWorld> {
  const clock = fakeClock({ now: 0 })
  const harness = await createHarness({ clock, ids: fakeIds(), logger: recordingLogger(), ...options })
  open.push(harness)
  const session = appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
  const agent: ToolAgent = { id: session.id, session }
  const ctx = harness.ctx.child('agent', { scope: agent })
  const tools = ctx.get(services.tools) as ToolRegistry
  const turn = new AbortController()
  const contexts: ToolContextMessage[] = []
  const live: LiveRecord = { results: [], progress: [], abandoned: [] }
  harness.on('tools/result', (payload) => {
    live.results.push(payload)
  })
  harness.on('tools/progress', (payload) => {
    live.progress.push(payload)
  })
  harness.on('tools/abandoned', (payload) => {
    live.abandoned.push(payload)
  })
  const checkpoints = { count: 0 }
  const approvals = createApprovalBroker({ ctx, agent })
  const stepContext = (overrides: StepOverrides = {}): ToolStepContext => ({
    ctx,
    agent,
    session,
    turn: 1,
    step: 1,
    signal: turn.signal,
    scope: agent,
    options: { ...defaultToolRunOptions, ...overrides.options },
    checkpoint: async () => {
      checkpoints.count++
      await harness.sessions.flush(session)
    },
    insertContext: (message) => {
      contexts.push(message)
    },
    approvals,
    ...overrides.step,
  })
  return {
    clock,
    harness,
    session,
    agent,
    ctx,
    tools,
    turn,
    contexts,
    live,
    checkpoints,
    stepContext,
    run(blocks, overrides) {
      append(session, AM(1, overrides?.step?.step ?? 1, ...(blocks as unknown as JsonObject[])))
      return runToolCalls(blocks, stepContext(overrides))
    },
  }
}

/** A body the test releases by call id. */
export interface Gates {
  /** `'<callId>-start'` / `'<callId>-end'` in the order bodies started and finished. */
  readonly trace: string[]
  /** An `execute` that records its start, waits for its gate, records its end and returns the gate's value. */
  readonly body: NonNullable<ToolSpec['execute']>
  /** The signals each started body received, by call id. */
  readonly signals: Map<string, AbortSignal>
  /** Lets the body of `callId` return `value` (default: `'<callId> done'`). */
  release(callId: string, value?: unknown): void
  /** Lets the body of `callId` throw `error`. */
  fail(callId: string, error: unknown): void
}

/** Makes a {@link Gates} set: `gate(id)` bodies keyed by the call id. */
export function gates(): Gates {
  const waiting = new Map<
    string,
    { promise: Promise<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }
  >()
  const trace: string[] = []
  const signals = new Map<string, AbortSignal>()
  const gateOf = (callId: string) => {
    let gate = waiting.get(callId)
    if (gate === undefined) {
      let resolve!: (value: unknown) => void
      let reject!: (error: unknown) => void
      const promise = new Promise<unknown>((done, failed) => {
        resolve = done
        reject = failed
      })
      gate = { promise, resolve, reject }
      waiting.set(callId, gate)
    }
    return gate
  }
  return {
    trace,
    signals,
    body: async (_args, context) => {
      trace.push(`${context.callId}-start`)
      signals.set(context.callId, context.signal)
      try {
        return (await gateOf(context.callId).promise) as never
      } finally {
        trace.push(`${context.callId}-end`)
      }
    },
    release(callId, value) {
      gateOf(callId).resolve(value === undefined ? `${callId} done` : value)
    },
    fail(callId, error) {
      gateOf(callId).reject(error)
    },
  }
}

/** `'tool/call <id>'`, `'tool/result <id>'` (plus ` <CODE>` for an error), or the type, for each event. */
export function describeEvents(events: readonly SessionEvent[]): string[] {
  return events.map((event) => {
    const data = event.data as Record<string, unknown>
    if (event.type === 'tool/call') return `tool/call ${String(data['callId'])}`
    if (event.type === 'tool/result') {
      const message = data['message'] as { source: { callId: string } }
      const error = data['error'] as { code: string } | undefined
      return `tool/result ${message.source.callId}${error === undefined ? '' : ` ${error.code}`}`
    }
    return event.type
  })
}

/** {@link describeEvents} of the tool events of the log (from the assistant message on). */
export function toolLog(session: Session): string[] {
  return describeEvents(session.events.filter((event) => event.type === 'tool/call' || event.type === 'tool/result'))
}

/** The data of the `tool/result` answering `callId`. */
export function resultData(session: Session, callId: string): ToolResultData {
  const found = session.events.find(
    (event) =>
      event.type === 'tool/result' && (event.data as unknown as ToolResultData).message.source.callId === callId,
  )
  if (found === undefined) throw new Error(`no tool/result for ${callId}`)
  return found.data as unknown as ToolResultData
}

/** The text blocks of the `tool/result` answering `callId`, joined. */
export function resultText(session: Session, callId: string): string {
  const blocks = resultData(session, callId).message.content[0].content
  return blocks.map((entry) => (entry.type === 'text' ? entry.text : `[${entry.type}]`)).join('')
}
