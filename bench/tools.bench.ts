/**
 * Tool-scheduler benchmark (issue: bench/tools.bench.ts): one step of 100
 * concurrency-safe no-op calls scheduled by `runToolCalls` on a real session (memory persistence),
 * against the floor of a bare `Promise.all` of the same 100 bodies in the same run (goal ≤ 5×).
 *
 * The scheduler's work per call is durable: a `tool/call` and a `tool/result` event (validated,
 * snapshotted, frozen, queued for persistence), the three waterfalls and the pool. A second floor,
 * "Promise.all + the same 200 appends", isolates the part that is the session log's.
 */
import {
  createApprovalBroker,
  createHarness,
  defineTool,
  type Logger,
  runToolCalls,
  type Session,
  type ToolCallBlock,
  type ToolStepContext,
} from 'yoke'
import { defaultToolRunOptions, type ToolAgent } from '../src/tools/index.js'
import { fakeIds } from 'yoke/testing'

const CALLS = 100
const ROUNDS = 5
const STEPS_PER_ROUND = 200

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const body = async (): Promise<string> => 'ok'
const noop = defineTool({
  name: 'noop',
  description: 'Does nothing',
  input: { type: 'object' },
  isConcurrencySafe: () => true,
  execute: body,
})

const blocks: readonly ToolCallBlock[] = Array.from({ length: CALLS }, (_, index) => ({
  type: 'tool-call',
  id: `c${index}`,
  name: 'noop',
  arguments: '{}',
}))

/** A fresh session with turn 1, step 1 and the assistant message holding the 100 calls. */
function openStep(session: Session): void {
  session.append('turn/start', { turn: 1 })
  session.append('step/start', { turn: 1, step: 1 })
  session.append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      message: {
        id: `m-${session.id}`,
        role: 'assistant',
        content: blocks,
        source: { kind: 'model', provider: 'bench', model: 'bench' },
      },
    },
    { surfaceOp: 'append' },
  )
}

async function bestMicros(label: string, round: () => Promise<void>): Promise<number> {
  await round()
  let best = Number.POSITIVE_INFINITY
  for (let index = 0; index < ROUNDS; index++) {
    const started = performance.now()
    await round()
    best = Math.min(best, ((performance.now() - started) * 1_000) / STEPS_PER_ROUND)
  }
  console.log(`${label.padEnd(52)} ${best.toFixed(1).padStart(10)} µs per step of ${CALLS} calls`)
  return best
}

/**
 * Runs the benchmark and prints the table.
 *
 * @returns the ratios
 */
export async function runToolsBench(): Promise<Record<string, number>> {
  const harness = await createHarness({ tools: [noop], ids: fakeIds(), logger: silent })
  try {
    const sessions = harness.sessions
    const floor = await bestMicros('bare Promise.all of the 100 bodies', async () => {
      for (let step = 0; step < STEPS_PER_ROUND; step++) await Promise.all(blocks.map(() => body()))
    })
    const withLog = await bestMicros('Promise.all + the same tool/call, tool/result appends', async () => {
      for (let step = 0; step < STEPS_PER_ROUND; step++) {
        const session = sessions.create()
        openStep(session)
        for (const block of blocks)
          session.append('tool/call', {
            turn: 1,
            step: 1,
            callId: block.id,
            name: block.name,
            arguments: block.arguments,
          })
        const results = await Promise.all(blocks.map(() => body()))
        blocks.forEach((block, index) => {
          session.append(
            'tool/result',
            {
              turn: 1,
              step: 1,
              message: {
                id: `r-${block.id}`,
                role: 'user',
                content: [
                  {
                    type: 'tool-result',
                    toolCallId: block.id,
                    isError: false,
                    content: [{ type: 'text', text: results[index] as string }],
                  },
                ],
                source: { kind: 'tool', callId: block.id },
              },
            },
            { surfaceOp: 'append' },
          )
        })
        await sessions.dispose(session)
      }
    })
    const scheduled = await bestMicros('runToolCalls (policy, pool, waterfalls, log)', async () => {
      for (let step = 0; step < STEPS_PER_ROUND; step++) {
        const session = sessions.create()
        openStep(session)
        const agent: ToolAgent = { id: session.id, session }
        const ctx = harness.ctx.child(`bench-${session.id}`, { scope: agent })
        const context: ToolStepContext = {
          ctx,
          agent,
          session,
          turn: 1,
          step: 1,
          signal: new AbortController().signal,
          scope: agent,
          options: defaultToolRunOptions,
          checkpoint: async () => {},
          insertContext: () => {},
          approvals: createApprovalBroker({ ctx, agent }),
        }
        const report = await runToolCalls(blocks, context)
        if (report.failure !== undefined) throw report.failure
        await ctx.dispose()
        await sessions.dispose(session)
      }
    })
    const ratio = scheduled / floor
    const logRatio = scheduled / withLog
    console.log(
      `${'runToolCalls / bare Promise.all'.padEnd(52)} ${ratio.toFixed(1).padStart(10)}×   goal ≤ 5× ${ratio <= 5 ? 'met' : 'not met'}`,
    )
    console.log(`${'runToolCalls / Promise.all + the same appends'.padEnd(52)} ${logRatio.toFixed(2).padStart(10)}×`)
    return { toolsVsPromiseAll: ratio, toolsVsAppends: logRatio }
  } finally {
    await harness.close()
  }
}
