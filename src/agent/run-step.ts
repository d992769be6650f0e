import { LlmError } from '../errors/llm-error.js'
import { createAssembler } from '../model/assembler.js'
import { modelFailure } from '../model/failure-defaults.js'
import type { PromptAssembly } from '../prompt/prompt-assembly.js'
import { renderPrompt } from '../prompt/render-prompt.js'
import type { AssistantContentBlock, ToolCallBlock } from '../session/content-block.js'
import type { AssistantMessage, UserMessage } from '../session/message.js'
import type { ResponseFormat } from '../session/response-format.js'
import { runToolCalls } from '../tools/run-tool-calls.js'
import { loopWaterfall } from './loop-dispatch.js'
import type { LoopHost } from './loop-host.js'
import { abortCheck } from './turn-end.js'

/**
 * How a step ended: `'stopped'` is a step whose calls were forbidden (the last one the step limit
 * allows) but whose answer held tool calls anyway; they were dropped, not run.
 */
export type StepOutcome = 'completed' | 'stopped' | 'max-tokens' | 'concluded' | 'owed'

/** One step to run: its coordinates, what entered it and the assembled prompt. */
export interface StepInput {
  /** The open turn. */
  readonly turn: number
  /** The step number. */
  readonly step: number
  /** The messages that enter the step, logged as `user/message`s. */
  readonly messages: readonly UserMessage[]
  /** The system prompt assembly of this step. */
  readonly assembly: PromptAssembly
  /**
   * The last step the limit allows: the request keeps its tools but says `toolChoice: 'none'`, and
   * tool calls the model makes anyway are dropped from the logged answer (as on `max-tokens`).
   */
  readonly forbidCalls: boolean
  /** The JSON shape the turn's answer must have (a structured run). */
  readonly responseFormat: ResponseFormat | undefined
  /** The turn signal. */
  readonly signal: AbortSignal
}

/** What one successful attempt produced. */
interface AttemptResult {
  readonly content: readonly AssistantContentBlock[]
  readonly finishReason: 'stop' | 'tool-calls' | 'max-tokens'
  /** Tool calls were dropped because the step forbade them. */
  readonly droppedCalls: boolean
}

/**
 * Runs one step: `step/start`, the entered `user/message`s, the model
 * attempts (with `agent/request-error` retries), the `assistant/message` anchor, the tool calls,
 * and `step/end` from a `finally`.
 *
 * @param host - the agent's loop host
 * @param input - the step
 * @returns the step outcome
 * @throws what ended the turn: an `LlmError`, a listener's error, or the abort reason
 */
export async function runStep(host: LoopHost, input: StepInput): Promise<StepOutcome> {
  const { session } = host
  const { turn, step, signal } = input
  session.append('step/start', { turn, step })
  try {
    for (const message of input.messages) session.append('user/message', message, { surfaceOp: 'append' })
    abortCheck(signal)
    const system = renderPrompt(input.assembly.sections, input.assembly.variables)
    const result = await attemptUntilDone(host, input, system)
    if (result.finishReason === 'max-tokens') return 'max-tokens'
    const calls = result.content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
    if (calls.length === 0) return result.droppedCalls ? 'stopped' : 'completed'
    // Tool bodies and their listeners run in the agent's initiator frame: `initiator.current()` is the agent there.
    const report = await host.frame(() =>
      runToolCalls(calls, {
        ctx: host.ctx,
        agent: host.agent,
        session,
        turn,
        step,
        signal,
        scope: host.agent,
        options: host.toolOptions,
        checkpoint: () => host.checkpoints.beforeTool(signal),
        insertContext: (message) => host.inbox.insert(message, 'next-step'),
        approvals: host.approvals,
      }),
    )
    if (report.failure !== undefined) throw report.failure
    return report.outcome
  } finally {
    session.append('step/end', { turn, step })
  }
}

async function attemptUntilDone(host: LoopHost, input: StepInput, system: string): Promise<AttemptResult> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await runAttempt(host, input, system, attempt)
    if (outcome.kind === 'message') return outcome
    const decision = await loopWaterfall(
      host,
      'agent/request-error',
      {
        agent: host.agent,
        turn: input.turn,
        step: input.step,
        attempt,
        failure: outcome.failure,
        signal: input.signal,
      },
      () => undefined,
      input.signal,
    )
    abortCheck(input.signal)
    if (decision?.kind !== 'retry') throw new LlmError(outcome.failure)
  }
}

type AttemptOutcome =
  | ({ readonly kind: 'message' } & AttemptResult)
  | { readonly kind: 'failure'; readonly failure: LlmError['failure'] }

async function runAttempt(host: LoopHost, input: StepInput, system: string, attempt: number): Promise<AttemptOutcome> {
  const { session, agent } = host
  const { turn, step, signal } = input
  const seed = host.requests.seed()
  // Raced against the turn signal: a listener that ignores it cannot hold a cancel up.
  const chosen = await loopWaterfall(
    host,
    'agent/request',
    { agent, turn, step, attempt, config: seed, signal },
    (payload) => payload.config,
    signal,
  )
  abortCheck(signal)
  const { call, request } = host.requests.build({
    chosen,
    turn,
    step,
    attempt,
    system,
    tools: input.assembly.tools,
    toolChoice: input.forbidCalls ? 'none' : undefined,
    responseFormat: input.responseFormat,
    signal,
  })
  await host.checkpoints.within(signal)
  abortCheck(signal)
  const assembler = createAssembler()
  const chunkSeqs: number[] = []
  for await (const chunk of call.stream(request)) {
    if (signal.aborted) break
    chunkSeqs.push(session.append('assistant/chunk', { turn, step, chunk }).seq)
    assembler.push(chunk)
  }
  const source = { kind: 'model', provider: call.config.provider, model: call.config.model } as const
  if (signal.aborted) {
    const kept = assembler.interruptedContent()
    if (kept.length > 0) {
      const message: AssistantMessage = { id: host.ids('message'), role: 'assistant', content: kept, source }
      const usage = assembler.usage
      session.append(
        'assistant/message',
        { turn, step, message, ...(usage === undefined ? {} : { usage }), interrupted: true },
        { surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
      )
    }
    throw signal.reason
  }
  const outcome = assembler.outcome()
  if (outcome.kind === 'failure') {
    const failure =
      outcome.reason === 'aborted' && outcome.failure.code !== 'ABORTED'
        ? modelFailure('ABORTED', outcome.failure.message, outcome.failure.phase ?? 'streaming', {})
        : outcome.failure
    return { kind: 'failure', failure }
  }
  // A truncated answer's calls are unusable, and a step that forbade calls must not run any.
  const dropCalls = outcome.finishReason === 'max-tokens' || input.forbidCalls
  const content = dropCalls ? outcome.content.filter((block) => block.type !== 'tool-call') : outcome.content
  const message: AssistantMessage = {
    id: host.ids('message'),
    role: 'assistant',
    content,
    source: { ...source, ...(outcome.replayState === undefined ? {} : { replayState: outcome.replayState }) },
  }
  session.append(
    'assistant/message',
    { turn, step, message, ...(outcome.usage === undefined ? {} : { usage: outcome.usage }) },
    { surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
  )
  return {
    kind: 'message',
    content,
    finishReason: outcome.finishReason,
    droppedCalls: content.length !== outcome.content.length,
  }
}
