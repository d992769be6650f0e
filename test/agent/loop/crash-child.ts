/**
 * The agent crash child (bundled by `crash.test.ts`, or run with `node --import tsx crash-child.ts
 * '<CrashChildOptions JSON>'`): a harness over `persistence: { dir }` drives one agent until it
 * reaches the scenario's kill point, flushes the session there, and writes one marker line
 * `{"reached", "lastSeq"}` to stdout: every event up to `lastSeq` is durable and nothing more is
 * appended until the parent's SIGKILL.
 *
 * - `'stream'`: turn 1 completes; turn 2's model stream emits a text block in four deltas and
 *   hangs; the marker follows the last delta's `assistant/chunk`.
 * - `'tool'`: turn 1's model calls `slow` (`c1`) and `probe` (`c2`) with `maxParallelToolCalls`
 *   1; `slow`'s body writes the marker and waits forever, so `c2` never starts. `probe`'s body
 *   would write `{"reached":"probe-ran"}`.
 *
 * With `durability: 'turn'` the harness syncs only at turn ends and the marker is written without
 * a flush: the events up to `lastSeq` were written by the turn's checkpoints, not synced.
 *
 * @module
 */
import { z } from 'zod'
import { createHarness, defineTool, type Session } from '../../../src/index.js'
import { scriptedModel, text } from '../../../src/testing/index.js'

/** The child's options, passed as one JSON argument. */
export interface CrashChildOptions {
  readonly dir: string
  readonly sessionId: string
  readonly scenario: 'stream' | 'tool'
  /** The harness's durability; at `'turn'` the marker does not flush. */
  readonly durability?: 'step' | 'turn'
}

const options = JSON.parse(process.argv[2] ?? '{}') as CrashChildOptions
/** Turn 2's text in the stream scenario, as the scripted model splits it (`chunkSize` 4). */
const streamedPieces = ['part', 'ial ', 'answ', 'er']

// Neither a hanging stream nor a pending tool body keeps the event loop alive: this does, until the kill.
setInterval(() => {}, 1 << 30)

/** Makes everything appended so far durable, then tells the parent where the log ends. */
async function reached(label: string, session: Session): Promise<void> {
  if (options.durability !== 'turn') await harness.sessions.flush(session)
  process.stdout.write(`${JSON.stringify({ reached: label, lastSeq: session.length - 1 })}\n`)
}

const slow = defineTool({
  name: 'slow',
  description: 'Announces that its body runs, then never returns',
  input: z.object({}),
  execute: async (_args, context) => {
    await reached('tool-body', context.session)
    return new Promise<never>(() => {})
  },
})
const probe = defineTool({
  name: 'probe',
  description: 'Announces that its body ran',
  input: z.object({}),
  execute: () => {
    process.stdout.write(`${JSON.stringify({ reached: 'probe-ran' })}\n`)
    return 'probed'
  },
})

const script =
  options.scenario === 'stream'
    ? [text('first answer'), { text: streamedPieces.join(''), chunkSize: 4, hang: true }]
    : [
        {
          toolCalls: [
            { id: 'c1', name: 'slow', arguments: '{}' },
            { id: 'c2', name: 'probe', arguments: '{}' },
          ],
        },
      ]

const harness = await createHarness({
  persistence: { dir: options.dir },
  ...(options.durability === undefined ? {} : { durability: options.durability }),
  model: scriptedModel(script),
  tools: [slow, probe],
  logger: {
    debug: () => {},
    info: () => {},
    warn: (message) => process.stderr.write(`[child warn] ${message}\n`),
    error: (message) => process.stderr.write(`[child error] ${message}\n`),
  },
})
const agent = await harness.createAgent({
  sessionId: options.sessionId,
  options: { maxParallelToolCalls: 1, verifyReconstruction: true },
})

if (options.scenario === 'stream') {
  const lastPiece = streamedPieces.at(-1)
  harness.on('session/event', ({ event }) => {
    const data = event.data as { turn?: number; chunk?: { type: string; text?: string } }
    if (
      event.type === 'assistant/chunk' &&
      data.turn === 2 &&
      data.chunk?.type === 'text-delta' &&
      data.chunk.text === lastPiece
    ) {
      void reached('streaming', agent.session)
    }
  })
  const first = await agent.run('first question')
  if (first.reason.kind !== 'completed') throw new Error(`turn 1 ended ${JSON.stringify(first.reason)}`)
  agent.followup('second question')
} else {
  agent.followup('use the tools')
}
