/**
 * Session errors of `yoke`: exits 3, 4, 6 and 1 with one stderr line,
 * nothing on stdout, and no file changed.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { jsonlPersistence } from 'yoke'
import { fixtureId, snapshot, writeCorruptLog, writeNewerFormatLog, writeTwoTurns } from './cli-fixtures.js'
import { failed, jsonOf, useCli } from './cli-process.js'

const { yoke, freshDir } = useCli()

describe('session errors', () => {
  test('a missing session exits 3 with SESSION_NOT_FOUND, for an id and for a path; nothing is created', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    await writeTwoTurns(d)
    const before = await snapshot(d)
    const outcomes = await Promise.all([
      yoke(cwd, 'inspect', 'nope', '--dir', 'd'),
      yoke(cwd, 'repair', 'nope', '--dir', 'd'),
      yoke(cwd, 'export', 'nope', '--dir', 'd', '--format', 'json'),
      yoke(cwd, 'inspect', 'd/nope.jsonl'),
      yoke(cwd, 'repair', 'nope', '--dir', 'missing'),
    ])
    for (const outcome of outcomes) failed(outcome, 3, 'SESSION_NOT_FOUND')
    expect(outcomes[0]?.stderr).toBe(
      'yoke: SESSION_NOT_FOUND: session "nope": no log in d (looked for nope.jsonl, .jsonl.gz and .jsonl.zst); pass --dir <path> or a log file\n',
    )
    const asJson = await yoke(cwd, 'inspect', 'nope', '--dir', 'd', '--json')
    expect(asJson.code).toBe(3)
    expect((JSON.parse(asJson.stderr) as { error: { code: string } }).error.code).toBe('SESSION_NOT_FOUND')
    expect(await snapshot(d)).toEqual(before)
    expect(await readdir(cwd)).toEqual(['d'])
  })

  test('a header with format version 99 exits 4 (FORMAT_TOO_NEW) for every command, unchanged', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const file = await writeNewerFormatLog(d)
    // The same log given by a path whose name is not a log name (the id comes from the header).
    await writeFile(join(d, 'renamed.txt'), await readFile(file))
    const before = await snapshot(d)
    const outcomes = await Promise.all([
      yoke(cwd, 'inspect', fixtureId, '--dir', 'd'),
      yoke(cwd, 'repair', fixtureId, '--dir', 'd'),
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'markdown'),
      yoke(cwd, 'inspect', 'd/renamed.txt'),
    ])
    for (const outcome of outcomes) failed(outcome, 4, 'FORMAT_TOO_NEW')
    expect(await snapshot(d)).toEqual(before)
  })

  test('damage before the tail exits 4 unchanged; --truncate-at-corruption quarantines it', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const { damaged } = await writeCorruptLog(d)
    const before = await snapshot(d)
    const outcomes = await Promise.all([
      yoke(cwd, 'inspect', fixtureId, '--dir', 'd'),
      yoke(cwd, 'repair', fixtureId, '--dir', 'd'),
      yoke(cwd, 'repair', fixtureId, '--dir', 'd', '--dry-run'),
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'json'),
    ])
    for (const outcome of outcomes) failed(outcome, 4, 'CORRUPT_LOG')
    const dryRun = await yoke(cwd, 'repair', fixtureId, '--dir', 'd', '--json', '--dry-run', '--truncate-at-corruption')
    expect(dryRun.code).toBe(0)
    expect(jsonOf(dryRun)).toMatchObject({
      action: 'quarantined',
      keptEvents: damaged - 1,
      quarantine: null,
      dryRun: true,
    })
    expect(await snapshot(d)).toEqual(before)

    const repaired = await yoke(cwd, 'repair', fixtureId, '--dir', 'd', '--json', '--truncate-at-corruption')
    expect(repaired.code).toBe(0)
    const report = jsonOf(repaired)
    expect(report).toMatchObject({ id: fixtureId, action: 'quarantined', keptEvents: damaged - 1 })
    const names = await readdir(d)
    const quarantine = names.find((name) => name.startsWith(`${fixtureId}.jsonl.corrupt-`))
    expect(report['quarantine']).toBe(join('d', quarantine as string))
    expect((await snapshot(d))[quarantine as string]?.bytes).toBe(before[`${fixtureId}.jsonl`]?.bytes)
    const inspected = jsonOf(await yoke(cwd, 'inspect', fixtureId, '--dir', 'd', '--json'))
    expect(inspected['repair']).toMatchObject({ needed: false })
  })

  test('a session leased by another process exits 6 for repair and demo; inspect needs no lease', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    await writeTwoTurns(d)
    const holder = jsonlPersistence({ dir: d })
    const lease = await holder.acquire(fixtureId)
    try {
      const before = await snapshot(d)
      const [repair, demo, inspect] = await Promise.all([
        yoke(cwd, 'repair', fixtureId, '--dir', 'd'),
        yoke(cwd, 'demo', '--dir', 'd'),
        yoke(cwd, 'inspect', fixtureId, '--dir', 'd'),
      ])
      failed(repair, 6, 'SESSION_LOCKED')
      failed(demo, 6, 'SESSION_LOCKED')
      expect(inspect.code).toBe(0)
      expect(await snapshot(d)).toEqual(before)
    } finally {
      await lease.release()
      await holder.close()
    }
  })

  test('an unexpected failure exits 1: --dir is a file, --out in a missing directory', async () => {
    const cwd = await freshDir()
    await writeFile(join(cwd, 'plain'), 'not a directory')
    await writeTwoTurns(join(cwd, 'd'))
    const [dirIsFile, outMissing] = await Promise.all([
      yoke(cwd, 'inspect', fixtureId, '--dir', 'plain'),
      yoke(cwd, 'export', fixtureId, '--dir', 'd', '--format', 'json', '--out', 'no/such/dir/out.json'),
    ])
    failed(dirIsFile, 1, 'ENOTDIR')
    failed(outMissing, 1, 'ENOENT')
  })
})
