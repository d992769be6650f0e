/**
 * The queued-prompts crash child (bundled by `queued-after-restart.test.ts`): a harness over
 * `persistence: { dir }` with a fake clock reaches the scenario's point, makes the log durable
 * there, and writes one marker line `{"reached", "lastSeq"}` to stdout; nothing more is appended
 * until the parent's SIGKILL.
 *
 * - `'queue'` (clock at 1000): turn 1's model streams and hangs; meanwhile `run('q1')` is queued at
 *   1500, `steer('s1')` at 1800 and `run('q2')` at 2000, behind the running turn.
 * - `'discard'` (clock at 90000): resumes the session with `queued: 'discard'`; the marker follows
 *   the resolved resume.
 *
 * @module
 */
import { createHarness } from 'yoke'
import { fakeClock, fakeIds, scriptedModel } from 'yoke/testing'

/** The child's options, passed as one JSON argument. */
export interface QueuedChildOptions {
  readonly dir: string
  readonly sessionId: string
  readonly scenario: 'queue' | 'discard'
}

const options = JSON.parse(process.argv[2] ?? '{}') as QueuedChildOptions

// A hanging stream does not keep the event loop alive: this does, until the kill.
setInterval(() => {}, 1 << 30)

const clock = fakeClock({ now: options.scenario === 'queue' ? 1000 : 90_000 })
const harness = await createHarness({
  persistence: { dir: options.dir },
  model: scriptedModel([{ text: 'thinking', hang: true }]),
  clock,
  ids: fakeIds(),
  logger: {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (message) => process.stderr.write(`[child error] ${message}\n`),
  },
})

/** Makes everything appended so far durable, then tells the parent where the log ends. */
async function reached(label: string): Promise<void> {
  const session = harness.sessions.get(options.sessionId)
  if (session === undefined) throw new Error(`session ${options.sessionId} is not live`)
  await harness.sessions.flush(session)
  process.stdout.write(`${JSON.stringify({ reached: label, lastSeq: session.length - 1 })}\n`)
}

if (options.scenario === 'queue') {
  const agent = await harness.createAgent({ sessionId: options.sessionId })
  const streaming = new Promise<void>((resolve) => {
    harness.on('session/event', ({ event }) => {
      if (event.type === 'assistant/chunk') resolve()
    })
  })
  void agent.run('first').catch(() => undefined)
  await streaming
  await clock.advance(500)
  void agent.run('q1').catch(() => undefined)
  await clock.advance(300)
  agent.steer('s1')
  await clock.advance(200)
  void agent.run('q2').catch(() => undefined)
  await reached('queued')
} else {
  await harness.resumeAgent(options.sessionId, { queued: 'discard' })
  await reached('discarded')
}
