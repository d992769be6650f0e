/**
 * Usage errors of `yoke` (exit 2), `--help` and `--version`.
 */
import { readdir } from 'node:fs/promises'
import { describe, expect, test } from 'vitest'
import { fixtureId } from './cli-fixtures.js'
import { failed, type Outcome, useCli } from './cli-process.js'

const { yoke, freshDir } = useCli()

describe('usage errors exit 2; --help and --version exit 0', () => {
  test('unknown command and flag, missing argument, bad --format, a JSON error with --json', async () => {
    const cwd = await freshDir()
    const outcomes = await Promise.all([
      yoke(cwd, 'frobnicate'),
      yoke(cwd),
      yoke(cwd, 'inspect', fixtureId, '--frob'),
      yoke(cwd, 'inspect'),
      yoke(cwd, 'inspect', 'a', 'b'),
      yoke(cwd, 'inspect', fixtureId, '--dir'),
      yoke(cwd, 'export', fixtureId, '--format', 'xml'),
      yoke(cwd, 'export', fixtureId),
      yoke(cwd, 'demo', '--frob'),
    ])
    for (const outcome of outcomes) failed(outcome, 2, 'INVALID_ARGUMENT')
    const [frobnicate, , flag, missing, , dirValue, format] = outcomes as Outcome[]
    expect(frobnicate?.stderr).toBe(
      'yoke: INVALID_ARGUMENT: unknown command "frobnicate"; the commands are inspect, repair, unlock, export, demo; run "yoke --help"\n',
    )
    expect(flag?.stderr).toBe(
      'yoke: INVALID_ARGUMENT: unknown flag "--frob" for "yoke inspect"; run "yoke inspect --help"\n',
    )
    expect(missing?.stderr).toBe(
      'yoke: INVALID_ARGUMENT: "yoke inspect" needs a <session> argument; run "yoke inspect --help"\n',
    )
    expect(dirValue?.stderr).toBe(
      'yoke: INVALID_ARGUMENT: --dir needs a value in "yoke inspect"; run "yoke inspect --help"\n',
    )
    expect(format?.stderr).toBe(
      'yoke: INVALID_ARGUMENT: --format must be json or markdown (got "xml"); run "yoke export --help"\n',
    )

    // An id the persistence layer cannot store is a bad argument too.
    failed(await yoke(cwd, 'inspect', 'bad id!'), 2, 'INVALID_SESSION_ID')

    const asJson = await yoke(cwd, 'inspect', '--json', '--frob')
    expect(asJson.code).toBe(2)
    expect(asJson.stdout).toBe('')
    expect(JSON.parse(asJson.stderr)).toEqual({
      error: {
        code: 'INVALID_ARGUMENT',
        message: 'unknown flag "--frob" for "yoke inspect"; run "yoke inspect --help"',
      },
    })
    expect(await readdir(cwd)).toEqual([])
  })

  test('--help, <command> --help and --version', async () => {
    const cwd = await freshDir()
    const [help, commandHelp, version] = await Promise.all([
      yoke(cwd, '--help'),
      yoke(cwd, 'repair', '--help'),
      yoke(cwd, '--version'),
    ])
    expect(help.code).toBe(0)
    expect(help.stderr).toBe('')
    for (const line of [
      '  yoke inspect <session> [--dir <path>] [--json] [--check]',
      '  yoke repair  <session> [--dir <path>] [--json] [--dry-run] [--truncate-at-corruption]',
      '  yoke unlock  <session> [--dir <path> | --sqlite <file> | --postgres <url> [--schema <name>]] [--json] [--force]',
      '  yoke export  <session> --format json|markdown [--dir <path>] [--out <file>]',
      '  yoke demo    [--dir <path>]',
      '  yoke --help | --version',
    ]) {
      expect(help.stdout).toContain(`${line}\n`)
    }
    expect(commandHelp.code).toBe(0)
    expect(
      commandHelp.stdout.startsWith(
        'Usage: yoke repair <session> [--dir <path>] [--json] [--dry-run] [--truncate-at-corruption]\n',
      ),
    ).toBe(true)
    expect(version).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' })
    expect(await readdir(cwd)).toEqual([])
  })
})
