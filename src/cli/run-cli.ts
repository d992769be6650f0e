/**
 * The `yoke` command line: picks the command, parses its arguments, runs it, and
 * turns any failure into one stderr line and an exit code.
 *
 * @module
 */
import { YOKE_VERSION } from '../version.js'
import type { CliCommand } from './cli-command.js'
import type { CliIo } from './cli-io.js'
import { CliUsageError } from './cli-usage-error.js'
import { demoCommand } from './demo-command.js'
import { errorLine, ExitCode, exitCodeOf } from './exit-codes.js'
import { exportCommand } from './export-command.js'
import { inspectCommand } from './inspect-command.js'
import { parseCommand } from './parse-command.js'
import { repairCommand } from './repair-command.js'
import { unlockCommand } from './unlock-command.js'

const commands: readonly CliCommand[] = [inspectCommand, repairCommand, unlockCommand, exportCommand, demoCommand]

/**
 * The text of `yoke --help`.
 *
 * @returns the usage, ending with a newline
 */
export function mainHelp(): string {
  return [
    `yoke ${YOKE_VERSION}: inspect, repair, unlock and export Yoke session logs, or run the demo.`,
    '',
    'Usage:',
    ...commands.map((command) => `  ${command.synopsis}`),
    '  yoke --help | --version',
    '',
    '<session> is a log file, or a session id looked up in --dir (default ./sessions).',
    'Run "yoke <command> --help" for a command. Exit codes: 0 ok, 1 unexpected failure, 2 usage error,',
    '3 session not found, 4 log unreadable, 5 repair needed (inspect --check), 6 session locked.',
    '',
  ].join('\n')
}

/** Whether the arguments ask for JSON (before any `--`), so an error is reported as JSON too. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(mainHelp())
    return ExitCode.ok
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${YOKE_VERSION}\n`)
    return ExitCode.ok
  }
  if (name === undefined) throw new CliUsageError('missing command; run "yoke --help"')
  const command = commands.find((candidate) => candidate.grammar.name === name)
  if (command === undefined) {
    const what = name.startsWith('-')
      ? `unknown flag ${JSON.stringify(name)}`
      : `unknown command ${JSON.stringify(name)}`
    throw new CliUsageError(
      `${what}; the commands are ${commands.map((candidate) => candidate.grammar.name).join(', ')}; run "yoke --help"`,
    )
  }
  const parsed = parseCommand(command.grammar, rest)
  if (parsed.help) {
    io.stdout(`Usage: ${command.synopsis.replace(/ {2,}/, ' ')}\n\n${command.help}\n`)
    return ExitCode.ok
  }
  return command.run(parsed, io)
}

/**
 * Runs one `yoke` command line. Never throws: a failure prints `yoke: <CODE>: <message>` (or,
 * with `--json`, `{"error":{"code":…,"message":…}}`) on stderr and returns its exit code.
 *
 * @param argv - the arguments after `yoke`
 * @param io - where to write, and the environment
 * @returns the exit code
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io)
  } catch (error) {
    io.stderr(errorLine(error, wantsJson(argv)))
    return exitCodeOf(error)
  }
}
