/**
 * `yoke inspect <session> [--dir <path>] [--json] [--check]`: never writes.
 *
 * @module
 */
import type { CliCommand } from './cli-command.js'
import type { CliIo } from './cli-io.js'
import { ExitCode } from './exit-codes.js'
import { jsonDocument, plural, usageText } from './format-text.js'
import { inspectLog, type LogInspection } from './log-inspection.js'
import { withLogStore } from './log-store.js'
import { booleanFlag, type ParsedCommand, stringFlag } from './parse-command.js'
import { releaseSessionTarget, resolveSessionTarget, type SessionTarget } from './session-target.js'
import { answeredCallIds, summarizeTurns, type TurnSummary, type UsageTotals } from './turn-summaries.js'

/** The `--json` document of `yoke inspect`. */
export interface InspectReport {
  /** The session id. */
  readonly id: string
  /** The log file. */
  readonly file: string
  /** The header's format version. */
  readonly formatVersion: number
  /** How many events are stored (closers not counted). */
  readonly events: number
  /** Every turn; an open one has `reason: null`. */
  readonly turns: readonly TurnSummary[]
  /** The usage of all turns. */
  readonly usage: UsageTotals
  /** What a repair would do. */
  readonly repair: {
    /** Persistence `repairPending`. */
    readonly needed: boolean
    /** The open turn, else `null`. */
    readonly openTurn: number | null
    /** The calls a repair answers with a synthetic result. */
    readonly unansweredToolCalls: readonly string[]
    /** The bytes a repair drops. */
    readonly droppedBytes: number
    /** The event types a repair appends. */
    readonly closers: readonly string[]
  }
}

/**
 * Builds the `inspect` report of an inspection.
 *
 * @param target - the session
 * @param inspection - what `inspectLog` read
 * @returns the report
 */
export function inspectReport(target: SessionTarget, inspection: LogInspection): InspectReport {
  const { turns, usage, openTurn } = summarizeTurns(inspection.stored)
  return {
    id: target.id,
    file: target.file,
    formatVersion: inspection.header.version,
    events: inspection.stored.length,
    turns,
    usage,
    repair: {
      needed: inspection.repairPending,
      openTurn,
      unansweredToolCalls: answeredCallIds(inspection.closers),
      droppedBytes: inspection.droppedBytes,
      closers: inspection.closers.map((event) => event.type),
    },
  }
}

function repairLine(repair: InspectReport['repair']): string {
  if (!repair.needed) return 'repair: not needed'
  const parts = ['repair: needed']
  if (repair.openTurn !== null) parts.push(`turn ${repair.openTurn} is open`)
  if (repair.unansweredToolCalls.length > 0)
    parts.push(`unanswered tool calls ${repair.unansweredToolCalls.join(', ')}`)
  if (repair.droppedBytes > 0) parts.push(`drops ${plural(repair.droppedBytes, 'torn byte')}`)
  if (repair.closers.length > 0) parts.push(`appends ${repair.closers.join(', ')}`)
  return `${parts.join(' · ')}; run "yoke repair" to fix it`
}

/**
 * The human-readable `inspect` output: one summary line, one line per turn, one repair line.
 *
 * @param report - the report
 * @returns the text, ending with a newline
 */
export function inspectText(report: InspectReport): string {
  const lines = [
    `session ${report.id} · ${report.file} · format v${report.formatVersion} · ${plural(report.events, 'event')} · ${plural(report.turns.length, 'turn')} · ${usageText(report.usage)}`,
    ...report.turns.map(
      (turn) =>
        `turn ${turn.turn} ${turn.reason ?? 'open'} · ${plural(turn.steps, 'step')} · ${plural(turn.toolCalls, 'tool call')} · ${usageText(turn.usage)}`,
    ),
    repairLine(report.repair),
  ]
  return `${lines.join('\n')}\n`
}

async function run(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const target = await resolveSessionTarget(parsed.positionals[0] as string, stringFlag(parsed, 'dir'))
  let inspection: Awaited<ReturnType<typeof inspectLog>>
  try {
    inspection = await withLogStore(target.dir, (harness) => inspectLog(harness, target))
  } finally {
    await releaseSessionTarget(target)
  }
  const report = inspectReport(target, inspection)
  io.stdout(booleanFlag(parsed, 'json') ? jsonDocument(report) : inspectText(report))
  return booleanFlag(parsed, 'check') && report.repair.needed ? ExitCode.repairNeeded : ExitCode.ok
}

/** `yoke inspect`. */
export const inspectCommand: CliCommand = {
  grammar: { name: 'inspect', flags: { dir: 'string', json: 'boolean', check: 'boolean' }, positionals: ['session'] },
  synopsis: 'yoke inspect <session> [--dir <path>] [--json] [--check]',
  help: [
    'Shows a session log: its turns, their steps, tool calls and usage, and whether it needs a repair.',
    'Never writes anything (no lock, no repair).',
    '',
    '  <session>       a log file, or a session id in --dir',
    '  --dir <path>    the log directory (default ./sessions)',
    '  --json          print one JSON document',
    '  --check         exit 5 when the log needs a repair',
  ].join('\n'),
  run,
}
