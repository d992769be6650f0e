/**
 * `yoke inspect` and `yoke repair` on damaged logs as a child process.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { createHarness } from 'yoke'
import { fixtureId, logLines, snapshot, tornTail, writeCrashedLog, writeTornLog } from './cli-fixtures.js'
import { jsonOf, useCli } from './cli-process.js'

const { yoke, freshDir } = useCli()
const usage = { inputTokens: 10, outputTokens: 11 }
const closers = ['tool/result', 'step/end', 'turn/end']

describe('a crashed log', () => {
  test('inspect reports the open turn and its closers, --check exits 5, repair closes it once', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const { file, lines } = await writeCrashedLog(d)
    const before = await snapshot(d)

    const [inspected, check, dryRun] = await Promise.all([
      yoke(cwd, 'inspect', fixtureId, '--dir', 'd', '--json'),
      yoke(cwd, 'inspect', fixtureId, '--dir', 'd', '--check'),
      yoke(cwd, 'repair', fixtureId, '--dir', 'd', '--json', '--dry-run'),
    ])
    expect(inspected.code).toBe(0)
    const report = jsonOf(inspected)
    expect(report['events']).toBe(lines - 1)
    expect(report['turns']).toEqual([
      { turn: 1, reason: 'completed', steps: 1, toolCalls: 0, usage },
      { turn: 2, reason: null, steps: 1, toolCalls: 1, usage },
    ])
    expect(report['repair']).toEqual({
      needed: true,
      openTurn: 2,
      unansweredToolCalls: ['c1'],
      droppedBytes: 0,
      closers,
    })
    expect(check.code).toBe(5)
    expect(check.stderr).toBe('')
    expect(check.stdout).toContain('turn 2 open · 1 step · 1 tool call')
    expect(check.stdout.trimEnd().split('\n').at(-1)).toBe(
      'repair: needed · turn 2 is open · unanswered tool calls c1 · appends tool/result, step/end, turn/end; run "yoke repair" to fix it',
    )
    expect(dryRun.code).toBe(0)
    expect(jsonOf(dryRun)).toEqual({
      id: fixtureId,
      action: 'repaired',
      keptEvents: lines - 1,
      closers,
      droppedBytes: 0,
      quarantine: null,
      dryRun: true,
    })
    expect(await snapshot(d)).toEqual(before)

    const repaired = await yoke(cwd, 'repair', fixtureId, '--dir', 'd', '--json')
    expect(repaired.code).toBe(0)
    expect(jsonOf(repaired)).toEqual({
      id: fixtureId,
      action: 'repaired',
      keptEvents: lines - 1,
      closers,
      droppedBytes: 0,
      quarantine: null,
    })
    const stored = await logLines(file)
    expect(stored).toHaveLength(lines + 3)
    expect(stored.slice(lines).map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(closers)
    const afterRepair = await snapshot(d)
    expect(Object.keys(afterRepair)).toEqual([`${fixtureId}.jsonl`])

    const again = await yoke(cwd, 'repair', fixtureId, '--dir', 'd', '--json')
    expect(again.code).toBe(0)
    expect(jsonOf(again)).toEqual({
      id: fixtureId,
      action: 'none',
      keptEvents: lines + 2,
      closers: [],
      droppedBytes: 0,
      quarantine: null,
    })
    const [text, after] = await Promise.all([
      yoke(cwd, 'repair', fixtureId, '--dir', 'd'),
      yoke(cwd, 'inspect', fixtureId, '--dir', 'd', '--json'),
    ])
    expect(text.code).toBe(0)
    expect(text.stdout).toBe(`repair ${fixtureId}: nothing to repair · ${lines + 2} events\n`)
    const turns = jsonOf(after)['turns'] as { reason: string }[]
    expect(turns.map((turn) => turn.reason)).toEqual(['completed', 'interrupted'])
    expect(jsonOf(after)['repair']).toMatchObject({ needed: false, openTurn: null })
    expect(await snapshot(d)).toEqual(afterRepair)
  })

  test('the text forms of a dry run and a repair name what they do', async () => {
    const cwd = await freshDir()
    const { lines } = await writeCrashedLog(join(cwd, 'sessions'))
    const dryRun = await yoke(cwd, 'repair', fixtureId, '--dry-run')
    expect(dryRun.stdout).toBe(
      `repair ${fixtureId} (dry run, nothing written): would be repaired · keeps ${lines - 1} events · appends tool/result, step/end, turn/end\n`,
    )
    const outcome = await yoke(cwd, 'repair', fixtureId)
    expect(outcome.stderr).toBe('')
    expect(outcome.code).toBe(0)
    expect(outcome.stdout).toBe(
      `repair ${fixtureId}: repaired · kept ${lines - 1} events · appended tool/result, step/end, turn/end\n`,
    )
  })
})

describe('a torn tail', () => {
  test('inspect counts the 17 stray bytes; repair drops them and the log reloads', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const file = await writeTornLog(d)
    const clean = (await readFile(file, 'utf8')).slice(0, -tornTail.length)
    const before = await snapshot(d)
    const inspected = jsonOf(await yoke(cwd, 'inspect', fixtureId, '--dir', 'd', '--json'))
    expect(inspected['repair']).toEqual({
      needed: true,
      openTurn: null,
      unansweredToolCalls: [],
      droppedBytes: 17,
      closers: [],
    })
    expect(await snapshot(d)).toEqual(before)

    const repaired = await yoke(cwd, 'repair', fixtureId, '--dir', 'd', '--json')
    expect(repaired.code).toBe(0)
    expect(jsonOf(repaired)).toMatchObject({ action: 'repaired', droppedBytes: 17, closers: [], quarantine: null })
    expect(await readFile(file, 'utf8')).toBe(clean)
    expect(clean.endsWith('}\n')).toBe(true)
    const harness = await createHarness({ persistence: { dir: d } })
    try {
      const loaded = await harness.persistence.inspect(fixtureId)
      expect(loaded.repairPending).toBe(false)
      expect(loaded.events.at(-1)?.type).toBe('turn/end')
    } finally {
      await harness.close()
    }
  })
})
