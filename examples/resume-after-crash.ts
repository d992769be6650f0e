/**
 * Resuming after a crash: a process is killed (SIGKILL, no cleanup at all)
 * while one of its tools is running; a new process resumes the session. Crash repair closes the
 * open turn with synthetic events — a `tool/result` for the call whose outcome is unknown, then
 * `step/end` and `turn/end` `interrupted` — and the agent goes on with turn 2.
 *
 * The example plays both processes: run plainly it is the parent, which starts itself again with
 * `--crash-child <dir>` as the child, kills that child mid-tool, then resumes. Sessions are JSONL
 * files in `--dir <directory>` (default: a fresh temporary directory, removed at the end).
 *
 * Run: `npm run example -- resume-after-crash`
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { z } from 'zod'
import { createHarness, defineTool } from 'yoke'
import { scriptedModel, text } from 'yoke/testing'

const sessionId = 'nightly-report'

/** The child's one line on stdout: the tool body runs, and the log is durable up to `lastSeq`. */
interface Marker {
  readonly running: string
  readonly lastSeq: number
}

// A tool that takes "forever". Crash repair never re-runs a tool: it cannot know whether the side
// effect happened, so it records the outcome as unknown and lets the model decide.
const buildReport = defineTool({
  name: 'build_report',
  description: 'Builds the nightly report (slow)',
  input: z.object({ day: z.string() }),
  async execute({ day }, context) {
    if (process.argv[2] === '--crash-child') {
      // Before a body starts, its `tool/call` is already durable (the scheduler flushed it).
      process.stdout.write(
        `${JSON.stringify({ running: context.callId, lastSeq: context.session.length - 1 } satisfies Marker)}\n`,
      )
      return new Promise<never>(() => {})
    }
    return `report for ${day}: 42 orders`
  },
})

if (process.argv[2] === '--crash-child') {
  // The child: one turn whose model calls the slow tool; the parent kills us inside its body.
  const harness = await createHarness({
    persistence: { dir: process.argv[3]! },
    tools: [buildReport],
    model: scriptedModel([{ toolCalls: [{ id: 'c1', name: 'build_report', arguments: { day: 'monday' } }] }]),
  })
  setInterval(() => {}, 1 << 30) // a pending tool body keeps nothing alive; this does, until the kill
  const agent = await harness.createAgent({ sessionId })
  void agent.run('Build the report for monday.')
} else {
  const dirFlag = process.argv.indexOf('--dir')
  const dir = dirFlag === -1 ? await mkdtemp(join(tmpdir(), 'yoke-crash-')) : process.argv[dirFlag + 1]!

  // 1. Start the child (this same program), wait until its tool runs, and kill it.
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, '--crash-child', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)))
  const lines = createInterface({ input: child.stdout })
  const marker = await new Promise<Marker>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line) as Marker))
    void exited.then(() => reject(new Error('the child exited before its tool ran')))
  })
  console.log(`child: ${marker.running} is running, the log is durable up to seq ${marker.lastSeq}; sending SIGKILL`)
  child.kill('SIGKILL')
  console.log(`child: killed by ${await exited}`)

  // 2. A new harness over the same directory resumes the session. `resumeAgent` repairs first:
  //    the dead child's lock is taken over (a warning on stderr), the closers are committed.
  const harness = await createHarness({
    persistence: { dir },
    tools: [buildReport],
    model: scriptedModel([text('The report was interrupted; I will build it again tonight.')]),
  })
  const agent = await harness.resumeAgent(sessionId)
  // Everything after the child's last durable event was written by the repair, up to `turn/end`.
  const log = agent.session.events
  const turnEnd = log.findIndex((event) => event.seq > marker.lastSeq && event.type === 'turn/end')
  console.log('crash repair appended:')
  for (const event of log.slice(marker.lastSeq + 1, turnEnd + 1)) {
    const data = event.data as {
      readonly error?: { readonly code: string }
      readonly reason?: { readonly kind: string }
    }
    const detail =
      event.type === 'tool/result'
        ? ` ${data.error?.code} (call ${marker.running})`
        : event.type === 'turn/end'
          ? ` ${data.reason?.kind}`
          : ''
    console.log(`  ${event.seq} ${event.type}${detail}`)
  }

  // 3. The agent continues with the next turn number.
  const result = await agent.run('What happened to the report?')
  console.log(`turn ${result.turn} ${result.reason.kind}: ${result.text}`)
  await harness.close()
  if (dirFlag === -1) await rm(dir, { recursive: true, force: true })
  if (result.reason.kind !== 'completed') process.exitCode = 1
}
