/**
 * `yoke export` as a child process: lossless JSON and a Markdown
 * transcript, the log never written.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { createHarness, interruptedTurnClosers, type SessionEvent } from 'yoke'
import { fixtureId, prompts, snapshot, writeCrashedLog, writeTwoTurns } from './cli-fixtures.js'
import { runProcess } from '../helpers/child-process.js'
import { useCli } from './cli-process.js'

const { yoke, freshDir, file: cliFile } = useCli()

describe('yoke export', () => {
  test('json is { header, events, repairPending: false } equal to a load; markdown shows turns and prompts', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const { file, events } = await writeTwoTurns(d)
    const before = await snapshot(d)
    const [asJson, markdown, toFile] = await Promise.all([
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'json'),
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'markdown'),
      yoke(cwd, 'export', file, '--format', 'json', '--out', 'out.json'),
    ])
    expect(asJson.stderr).toBe('')
    expect(asJson.code).toBe(0)
    const document = JSON.parse(asJson.stdout) as { header: unknown; events: SessionEvent[]; repairPending: boolean }
    expect(Object.keys(document)).toEqual(['header', 'events', 'repairPending'])
    expect(document.repairPending).toBe(false)
    expect(document.events).toEqual(events)
    // Lossless: every event serializes exactly as the loaded one (key order included).
    expect(document.events.map((event) => JSON.stringify(event))).toEqual(events.map((event) => JSON.stringify(event)))
    expect(document.header).toEqual(
      JSON.parse((await readFile(file, 'utf8')).split('\n')[0] as string, (key, value) =>
        key === 'type' ? undefined : value,
      ),
    )

    expect(markdown.code).toBe(0)
    expect(markdown.stderr).toBe('')
    expect(markdown.stdout).toBe(
      `${[
        `# Session ${fixtureId}`,
        '## Turn 1 (completed)',
        '### User',
        prompts[0],
        '### Assistant',
        'one',
        '## Turn 2 (completed)',
        '### User',
        prompts[1],
        '### Assistant',
        '→ echo {"text":"ping"}',
        '### Tool result: echo (c1)',
        'echo: ping',
        '### Assistant',
        'done',
      ].join('\n\n')}\n`,
    )

    expect(toFile).toEqual({ code: 0, stdout: '', stderr: '' })
    expect(await readFile(join(cwd, 'out.json'), 'utf8')).toBe(asJson.stdout)
    expect(await snapshot(d)).toEqual(before)
  })

  test('a crashed log exports with the closers a repair would append, and stays unrepaired', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const { file } = await writeCrashedLog(d)
    const before = await snapshot(d)
    const [asJson, markdown, ontoLog] = await Promise.all([
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'json'),
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'markdown'),
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'json', '--out', file),
    ])
    const document = JSON.parse(asJson.stdout) as { events: SessionEvent[]; repairPending: boolean }
    expect(document.repairPending).toBe(true)
    const harness = await createHarness({ persistence: { dir: d } })
    let stored: readonly SessionEvent[]
    try {
      stored = (await harness.persistence.readFrom(fixtureId, 0)).events
    } finally {
      await harness.close()
    }
    expect(document.events).toEqual([...stored, ...interruptedTurnClosers(stored)])
    expect(document.events.slice(-3).map((event) => event.type)).toEqual(['tool/result', 'step/end', 'turn/end'])
    expect(markdown.stdout).toContain('## Turn 2 (interrupted)')
    expect(markdown.stdout).toContain('### Tool result: echo (c1) — error')
    expect(ontoLog.code).toBe(2)
    expect(ontoLog.stderr).toContain('is the session log itself')
    expect(await snapshot(d)).toEqual(before)
  })

  test('a reader that closes the pipe early ends the export quietly (no EPIPE stack trace)', async () => {
    const cwd = await freshDir()
    await writeTwoTurns(join(cwd, 'd'))
    const command = `"${process.execPath}" "${cliFile()}" export ${fixtureId} --dir d --format json | head -c 0; echo "status \${PIPESTATUS[0]}" >&2`
    const outcome = await runProcess('bash', ['-c', command], { cwd })
    expect(outcome.stdout).toBe('')
    expect(outcome.stderr).toMatch(/^status (0|141)\n$/)
  })
})
