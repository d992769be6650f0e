/**
 * `yoke export <session> --format json|markdown [--dir <path>] [--out <file>]`:
 * reads like `inspect` (never writes the log), closers included in memory.
 *
 * @module
 */
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { CliCommand } from './cli-command.js'
import type { CliIo } from './cli-io.js'
import { CliUsageError } from './cli-usage-error.js'
import { ExitCode } from './exit-codes.js'
import { inspectLog } from './log-inspection.js'
import { withLogStore } from './log-store.js'
import { markdownTranscript } from './markdown-transcript.js'
import { type ParsedCommand, stringFlag } from './parse-command.js'
import { releaseSessionTarget, resolveSessionTarget } from './session-target.js'

const formats = ['json', 'markdown'] as const

function formatOf(parsed: ParsedCommand): (typeof formats)[number] {
  const format = stringFlag(parsed, 'format')
  if (format === undefined)
    throw new CliUsageError('"yoke export" needs --format json or --format markdown; run "yoke export --help"')
  const known = formats.find((candidate) => candidate === format)
  if (known === undefined)
    throw new CliUsageError(
      `--format must be json or markdown (got ${JSON.stringify(format)}); run "yoke export --help"`,
    )
  return known
}

async function run(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const format = formatOf(parsed)
  const target = await resolveSessionTarget(parsed.positionals[0] as string, stringFlag(parsed, 'dir'))
  const out = stringFlag(parsed, 'out')
  if (out !== undefined && resolve(out) === resolve(target.file)) {
    await releaseSessionTarget(target)
    throw new CliUsageError(`--out ${JSON.stringify(out)} is the session log itself; export to another file`)
  }
  let text: string
  try {
    text = await withLogStore(target.dir, async (harness) => {
      const inspection = await inspectLog(harness, target)
      if (format === 'markdown') return markdownTranscript(target.id, inspection.events, harness.sessions.catalog)
      return `${JSON.stringify({ header: inspection.header, events: inspection.events, repairPending: inspection.repairPending })}\n`
    })
  } finally {
    await releaseSessionTarget(target)
  }
  if (out === undefined) io.stdout(text)
  else await writeFile(out, text)
  return ExitCode.ok
}

/** `yoke export`. */
export const exportCommand: CliCommand = {
  grammar: { name: 'export', flags: { format: 'string', dir: 'string', out: 'string' }, positionals: ['session'] },
  synopsis: 'yoke export  <session> --format json|markdown [--dir <path>] [--out <file>]',
  help: [
    'Prints a session log. json: one line { header, events, repairPending }, the events exactly as',
    'stored, followed (when a repair is pending) by the closers a repair would append. markdown: the',
    'conversation, turn by turn. Never writes the log.',
    '',
    '  <session>                 a log file, or a session id in --dir',
    '  --format json|markdown    required',
    '  --dir <path>              the log directory (default ./sessions)',
    '  --out <file>              write to <file> instead of stdout',
  ].join('\n'),
  run,
}
