/**
 * `yoke inspect` as a child process: reads, never writes.
 */
import { copyFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fixtureId, snapshot, writeTwoTurns } from './cli-fixtures.js'
import { jsonOf, useCli } from './cli-process.js'

const { yoke, freshDir } = useCli()
const usage = { inputTokens: 10, outputTokens: 11 }

describe('yoke inspect', () => {
  test('a clean log → turns completed, no repair needed, the file untouched; text form and a log path too', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const { events, file } = await writeTwoTurns(d)
    const before = await snapshot(d)
    const [outcome, text, byPath] = await Promise.all([
      yoke(cwd, 'inspect', fixtureId, '--dir', 'd', '--json'),
      yoke(cwd, 'inspect', fixtureId, '--dir', 'd'),
      yoke(cwd, 'inspect', file, '--dir', 'nowhere', '--json', '--check'),
    ])
    expect(outcome.code).toBe(0)
    expect(jsonOf(outcome)).toEqual({
      id: fixtureId,
      file: join('d', `${fixtureId}.jsonl`),
      formatVersion: 1,
      events: events.length,
      turns: [
        { turn: 1, reason: 'completed', steps: 1, toolCalls: 0, usage },
        { turn: 2, reason: 'completed', steps: 2, toolCalls: 1, usage: { inputTokens: 20, outputTokens: 22 } },
      ],
      usage: { inputTokens: 30, outputTokens: 33 },
      repair: { needed: false, openTurn: null, unansweredToolCalls: [], droppedBytes: 0, closers: [] },
    })

    expect(text.code).toBe(0)
    expect(text.stderr).toBe('')
    expect(text.stdout).toBe(
      [
        `session ${fixtureId} · d/${fixtureId}.jsonl · format v1 · ${events.length} events · 2 turns · 30 in / 33 out tokens`,
        'turn 1 completed · 1 step · 0 tool calls · 10 in / 11 out tokens',
        'turn 2 completed · 2 steps · 1 tool call · 20 in / 22 out tokens',
        'repair: not needed',
        '',
      ].join('\n'),
    )

    // A path to an existing log: --dir is ignored, the id is the file's; --check exits 0 on a clean log.
    expect(byPath.code).toBe(0)
    expect(jsonOf(byPath)).toMatchObject({ id: fixtureId, file, events: events.length, repair: { needed: false } })
    expect(await snapshot(d)).toEqual(before)
  })

  test('the default directory is ./sessions', async () => {
    const cwd = await freshDir()
    await writeTwoTurns(join(cwd, 'sessions'))
    const outcome = await yoke(cwd, 'inspect', fixtureId, '--json')
    expect(outcome.code).toBe(0)
    expect(jsonOf(outcome)).toMatchObject({ id: fixtureId, file: join('sessions', `${fixtureId}.jsonl`) })
  })
})

describe('a log file path: the id comes from the header', () => {
  test('a renamed log, one with another extension, and a non-log file that shares an id name', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const { events, file } = await writeTwoTurns(d)
    await copyFile(file, join(cwd, 'renamed.jsonl'))
    await copyFile(file, join(cwd, 'log.txt'))
    await writeFile(join(cwd, fixtureId), 'not a log, just a note')
    await writeTwoTurns(join(cwd, 'sessions'))
    const [renamed, txt, shadowed, repair] = await Promise.all([
      yoke(cwd, 'inspect', 'renamed.jsonl', '--json'),
      yoke(cwd, 'inspect', 'log.txt', '--json'),
      yoke(cwd, 'inspect', fixtureId, '--json'),
      yoke(cwd, 'repair', 'renamed.jsonl'),
    ])
    expect(renamed.code).toBe(0)
    expect(jsonOf(renamed)).toMatchObject({ id: fixtureId, file: 'renamed.jsonl', events: events.length })
    expect(txt.code).toBe(0)
    expect(jsonOf(txt)).toMatchObject({ id: fixtureId, file: 'log.txt', events: events.length })
    expect(shadowed.code).toBe(0)
    expect(jsonOf(shadowed)).toMatchObject({ id: fixtureId, file: join('sessions', `${fixtureId}.jsonl`) })
    // repair rewrites the log in place, so it needs the log under its own name.
    expect(repair.code).toBe(2)
    expect(repair.stderr).toContain(`rename it to ${fixtureId}.jsonl`)
  })
})
