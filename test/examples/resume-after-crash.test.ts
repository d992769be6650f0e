/**
 * `examples/resume-after-crash.ts`: the example kills its own child
 * with SIGKILL inside a tool body and resumes. The stored log then holds the synthetic
 * `tool/result` and `turn/end` `interrupted`, and the next turn completes.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { jsonlPersistence } from 'yoke'
import { bundleExample, type ExampleBundle } from './example-process.js'

let example: ExampleBundle | undefined
let dir = ''

beforeAll(async () => {
  example = await bundleExample('resume-after-crash')
  dir = await mkdtemp(join(tmpdir(), 'yoke-example-crash-'))
}, 30_000)

afterAll(async () => {
  await example?.remove()
  await rm(dir, { recursive: true, force: true })
})

test('the killed turn is closed by crash repair and the resumed agent completes turn 2', async () => {
  const outcome = await example!.run(['--dir', dir])
  expect(outcome.code).toBe(0)
  // The only diagnostic: the resumed harness took over the dead child's lock.
  expect(outcome.stderr.trimEnd().split('\n')).toEqual([
    expect.stringMatching(/^yoke warn: session "nightly-report": took over the stale lock of pid \d+/),
  ])
  expect(outcome.stdout.trimEnd().split('\n')).toEqual([
    'child: c1 is running, the log is durable up to seq 12; sending SIGKILL',
    'child: killed by SIGKILL',
    'crash repair appended:',
    '  13 tool/result TOOL_OUTCOME_UNKNOWN (call c1)',
    '  14 step/end',
    '  15 turn/end interrupted',
    'turn 2 completed: The report was interrupted; I will build it again tonight.',
  ])

  // The stored log, read by a bare adapter: the crash point, the closers, then a completed turn 2.
  const adapter = jsonlPersistence({ dir })
  try {
    const { events, torn } = await adapter.load('nightly-report')
    expect(torn).toBeUndefined()
    expect(events[12]).toMatchObject({ type: 'tool/call', data: { turn: 1, callId: 'c1', name: 'build_report' } })
    expect(events.slice(13, 16).map((event) => [event.type, event.data])).toEqual([
      [
        'tool/result',
        expect.objectContaining({
          turn: 1,
          error: { name: 'InterruptedToolCallError', code: 'TOOL_OUTCOME_UNKNOWN' },
          meta: { synthetic: true },
        }),
      ],
      ['step/end', expect.objectContaining({ turn: 1 })],
      ['turn/end', expect.objectContaining({ turn: 1, reason: { kind: 'interrupted' } })],
    ])
    const turnEnds = events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(turnEnds).toEqual([
      expect.objectContaining({ turn: 1, reason: { kind: 'interrupted' } }),
      expect.objectContaining({ turn: 2, reason: { kind: 'completed' } }),
    ])
    // Repair never re-runs a tool: no successful result for c1 exists.
    expect(events.filter((event) => event.type === 'tool/result')).toHaveLength(1)
  } finally {
    await adapter.close()
  }
}, 20_000)
