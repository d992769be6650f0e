import {
  type Agent,
  type BasicCompactionOptions,
  basicCompaction,
  checkpointText,
  createHarness,
  type Harness,
  type Message,
  type SessionEvent,
  type Summarizer,
  type ToolDefinition,
} from 'yoke'
import { recordingLogger } from '../helpers/recording-logger.js'
import { fakeClock, fakeIds, type ScriptEntry, type ScriptedModelOptions, scriptedModel, text } from 'yoke/testing'

/** The 400-character prompt of turn `k`. */
export function prompt(k: number): string {
  return `q${k}`.padEnd(400, '.')
}

/** The 400-character reply of turn `k`. */
export function reply(k: number): string {
  return `a${k}`.padEnd(400, '-')
}

/** The checkpoint text of a summary (`CHK(s)`). */
export const CHK = checkpointText

/** `4 + ceil(text.length / 4)`: the heuristic of a one-text-block message. */
export function tokensOf(value: string): number {
  return 4 + Math.ceil(value.length / 4)
}

/** A summarizer that returns `summary` (`stub('S')`), recording its inputs. */
export function stub(summary: string): Summarizer & { readonly calls: Parameters<Summarizer>[0][] } {
  const calls: Parameters<Summarizer>[0][] = []
  const summarizer = async (input: Parameters<Summarizer>[0]) => {
    calls.push(input)
    return { text: summary, provider: 'mock', model: 'mock', attempts: 1 }
  }
  return Object.assign(summarizer, { calls })
}

/** A promise released by hand. */
export interface Gate {
  readonly promise: Promise<void>
  readonly open: () => void
  /** Resolves once something waits on the gate. */
  readonly entered: Promise<void>
  readonly enter: () => void
}

/** Creates a {@link Gate}. */
export function gate(): Gate {
  let open = (): void => undefined
  let enter = (): void => undefined
  const promise = new Promise<void>((resolve) => (open = resolve))
  const entered = new Promise<void>((resolve) => (enter = resolve))
  return { promise, open, entered, enter }
}

/** A stub that waits on `gate` before answering `summary`. */
export function gatedStub(summary: string, waitOn: Gate): Summarizer {
  return async () => {
    waitOn.enter()
    await waitOn.promise
    return { text: summary, provider: 'mock', model: 'mock', attempts: 1 }
  }
}

/** The texts of messages (first text block, or the tool-result's inner text). */
export function texts(messages: readonly Message[]): string[] {
  return messages.map((message) => {
    const block = message.content[0]
    if (block?.type === 'text') return block.text
    if (block?.type === 'tool-result')
      return block.content.map((inner) => (inner.type === 'text' ? inner.text : '')).join('')
    return ''
  })
}

/** The seq of the surface event holding `value` (`[x]`). */
export function seqOf(events: readonly SessionEvent[], value: string): number {
  const found = events.find((event) => {
    if (event.surfaceOp !== 'append') return false
    const data = event.data as {
      readonly content?: readonly { readonly text?: string }[]
      readonly message?: { readonly content: readonly { readonly text?: string }[] }
    }
    const content = data.content ?? data.message?.content ?? []
    return content.some((block) => block.text === value)
  })
  if (found === undefined) throw new Error(`no surface event holds ${value.slice(0, 8)}…`)
  return found.seq
}

/** The types of events, `assistant/chunk` left out. */
export function typesWithoutChunks(events: readonly SessionEvent[]): string[] {
  return events.map((event) => event.type).filter((type) => type !== 'assistant/chunk')
}

/** The `compaction/*` events. */
export function compactionEvents(events: readonly SessionEvent[]): SessionEvent[] {
  return events.filter((event) => event.type.startsWith('compaction/'))
}

/** What {@link setup} takes. */
export interface SetupOptions {
  readonly script: readonly ScriptEntry[]
  readonly compaction?: BasicCompactionOptions
  readonly model?: Omit<ScriptedModelOptions, 'clock'>
  readonly persistence?: { readonly dir: string }
  readonly tools?: readonly ToolDefinition[]
  /** Shared across harnesses that resume each other's sessions. */
  readonly ids?: ReturnType<typeof fakeIds>
}

/** A harness with a scripted model (`info: { contextWindow: 1000 }` unless given), fake clock and ids. */
export async function setup(options: SetupOptions) {
  const clock = fakeClock()
  const model = scriptedModel(options.script, { info: { contextWindow: 1000 }, ...options.model })
  const logger = recordingLogger()
  const harness: Harness = await createHarness({
    logger,
    model,
    clock,
    ids: options.ids ?? fakeIds(),
    patches: [basicCompaction(options.compaction ?? {})],
    ...(options.persistence === undefined ? {} : { persistence: options.persistence }),
    ...(options.tools === undefined ? {} : { tools: options.tools }),
  })
  const compactionLive: { readonly outcome: string; readonly reason?: string; readonly code?: string }[] = []
  harness.on('agent/compaction', (payload) => {
    compactionLive.push({
      outcome: payload.outcome,
      ...(payload.reason === undefined ? {} : { reason: payload.reason }),
      ...(payload.error === undefined ? {} : { code: payload.error.code }),
    })
  })
  return { harness, model, clock, compactionLive, logger }
}

/** A script of `n` text replies `a1…an`. */
export function replies(n: number): ScriptEntry[] {
  return Array.from({ length: n }, (_, index) => text(reply(index + 1)))
}

/** Runs `F(n)`: turns `q1/a1 … qn/an`. */
export async function completeTurns(agent: Agent, n: number, from = 1): Promise<void> {
  for (let k = from; k < from + n; k++) {
    const result = await agent.run(prompt(k))
    if (result.reason.kind !== 'completed') throw new Error(`turn ${k} ended ${result.reason.kind}`)
  }
}
