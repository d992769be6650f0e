/**
 * `yoke repair <session> [--dir <path>] [--json] [--dry-run] [--truncate-at-corruption]`:
 * persistence `repair` under the session's lease.
 *
 * @module
 */
import { basename, dirname, join } from 'node:path'
import { PersistenceCorruptionError } from '../errors/persistence-corruption-error.js'
import type { Harness } from '../harness/harness.js'
import { checkStoredLog } from '../persistence/check-stored-log.js'
import { interruptedTurnClosers } from '../session/interrupted-turn-closers.js'
import type { CliCommand } from './cli-command.js'
import type { CliIo } from './cli-io.js'
import { ExitCode } from './exit-codes.js'
import { jsonDocument, plural } from './format-text.js'
import { inspectLog } from './log-inspection.js'
import { withLogStore } from './log-store.js'
import { booleanFlag, type ParsedCommand, stringFlag } from './parse-command.js'
import { resolveSessionTarget, type SessionTarget } from './session-target.js'

/** The `--json` document of `yoke repair`. */
export interface RepairCommandReport {
  /** The session id. */
  readonly id: string
  /** What was (or, with `dryRun`, would be) done. */
  readonly action: 'none' | 'repaired' | 'quarantined'
  /** Events kept from storage. */
  readonly keptEvents: number
  /** The types of the closers appended. */
  readonly closers: readonly string[]
  /** Bytes dropped (`0` when none). */
  readonly droppedBytes: number
  /** Where the damaged original went (`quarantined`), else `null`; `null` in a dry run. */
  readonly quarantine: string | null
  /** Present (`true`) only with `--dry-run`: nothing was written. */
  readonly dryRun?: true
}

async function repairNow(
  harness: Harness,
  target: SessionTarget,
  truncateAtCorruption: boolean,
): Promise<RepairCommandReport> {
  const report = await harness.persistence.repair(target.id, truncateAtCorruption ? { truncateAtCorruption } : {})
  // Shown next to the log as the user named it (the adapter reports an absolute path).
  const quarantine = report.quarantine === undefined ? null : join(dirname(target.file), basename(report.quarantine))
  return {
    id: target.id,
    action: report.action,
    keptEvents: report.keptEvents,
    closers: report.closers,
    droppedBytes: report.droppedBytes ?? 0,
    quarantine,
  }
}

/** A dry run: the coordinator's read-only `inspect`, or for damage with `--truncate-at-corruption` the adapter's read-only `load`. */
async function plannedRepair(
  harness: Harness,
  target: SessionTarget,
  truncateAtCorruption: boolean,
): Promise<RepairCommandReport> {
  try {
    const inspection = await inspectLog(harness, target)
    return {
      id: target.id,
      action: inspection.repairPending ? 'repaired' : 'none',
      keptEvents: inspection.stored.length,
      closers: inspection.closers.map((event) => event.type),
      droppedBytes: inspection.droppedBytes,
      quarantine: null,
      dryRun: true,
    }
  } catch (error) {
    if (!truncateAtCorruption || !PersistenceCorruptionError.is(error)) throw error
  }
  const stored = await harness.persistence.adapter.load(target.id, { truncateAtCorruption: true })
  checkStoredLog(target.id, stored, harness.sessions.catalog, { full: true })
  const closers = interruptedTurnClosers(stored.events)
  const pending = stored.torn !== undefined || closers.length > 0
  return {
    id: target.id,
    action: stored.torn?.kind === 'corrupt' ? 'quarantined' : pending ? 'repaired' : 'none',
    keptEvents: stored.events.length,
    closers: closers.map((event) => event.type),
    droppedBytes: stored.torn?.droppedBytes ?? 0,
    quarantine: null,
    dryRun: true,
  }
}

/**
 * The human-readable `repair` output: one line.
 *
 * @param report - the report
 * @returns the text, ending with a newline
 */
export function repairText(report: RepairCommandReport): string {
  const dry = report.dryRun === true
  const head = `repair ${report.id}${dry ? ' (dry run, nothing written)' : ''}`
  if (report.action === 'none') return `${head}: nothing to repair · ${plural(report.keptEvents, 'event')}\n`
  const parts = [
    `${head}: ${dry ? `would be ${report.action}` : report.action}`,
    `${dry ? 'keeps' : 'kept'} ${plural(report.keptEvents, 'event')}`,
  ]
  if (report.closers.length > 0) parts.push(`${dry ? 'appends' : 'appended'} ${report.closers.join(', ')}`)
  if (report.droppedBytes > 0) parts.push(`${dry ? 'drops' : 'dropped'} ${plural(report.droppedBytes, 'byte')}`)
  if (report.quarantine !== null) parts.push(`damaged original kept as ${report.quarantine}`)
  return `${parts.join(' · ')}\n`
}

async function run(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const target = await resolveSessionTarget(parsed.positionals[0] as string, stringFlag(parsed, 'dir'), {
    writes: true,
  })
  const truncateAtCorruption = booleanFlag(parsed, 'truncate-at-corruption')
  const plan = booleanFlag(parsed, 'dry-run') ? plannedRepair : repairNow
  const report = await withLogStore(target.dir, (harness) => plan(harness, target, truncateAtCorruption))
  io.stdout(booleanFlag(parsed, 'json') ? jsonDocument(report) : repairText(report))
  return ExitCode.ok
}

/** `yoke repair`. */
export const repairCommand: CliCommand = {
  grammar: {
    name: 'repair',
    flags: { dir: 'string', json: 'boolean', 'dry-run': 'boolean', 'truncate-at-corruption': 'boolean' },
    positionals: ['session'],
  },
  synopsis: 'yoke repair  <session> [--dir <path>] [--json] [--dry-run] [--truncate-at-corruption]',
  help: [
    'Repairs a session log after a crash: cuts a torn tail and closes an interrupted turn, under the',
    "session's lock (exit 6 while another process writes it). Nothing to repair exits 0.",
    '',
    '  <session>                 a log file, or a session id in --dir',
    '  --dir <path>              the log directory (default ./sessions)',
    '  --json                    print one JSON document',
    '  --dry-run                 print what would be done, write nothing',
    '  --truncate-at-corruption  keep the valid part of a log damaged before its tail and move',
    '                            the damaged original aside (without it such a log exits 4 unchanged)',
  ].join('\n'),
  run,
}
