/**
 * The options of `createWorker` and their check.
 *
 * @module
 */
import type { HarnessOptions, PersistenceAdapter, ResumeOverrides } from 'yoke'
import { optionIssues, throwOptionIssues, type OptionRule } from '../kernel/option-issues.js'

/**
 * Options of `createWorker`: the harness options the worker's own harness is built with (model,
 * tools, plugins, presets, …, passed through to `createHarness`), plus the worker's.
 */
export interface WorkerOptions extends Omit<HarnessOptions, 'persistence'> {
  /**
   * A `postgresPersistence(…)` adapter: the sessions, their leases and the inbox live in its
   * schema. The worker's harness owns it: `close()` closes it.
   */
  readonly persistence: PersistenceAdapter
  /**
   * How many sessions this worker drives at once: a positive integer. A session waiting for a
   * tool approval counts until it is decided.
   *
   * @defaultValue 8
   */
  readonly concurrency?: number
  /**
   * How often the worker looks for runnable sessions without being told, in milliseconds: the
   * fallback for lost notifications, and the only way with `listen: false`.
   *
   * @defaultValue 1000
   */
  readonly pollMs?: number
  /**
   * Whether the worker keeps one connection `LISTEN`ing for submits (checked out of the adapter's
   * pool for the worker's lifetime, reopened when it drops). `false` for a transaction-pooling
   * proxy (PgBouncer in transaction mode), where `LISTEN` does not work: the worker then only
   * polls every `pollMs`.
   *
   * @defaultValue true
   */
  readonly listen?: boolean
  /**
   * How often the sweeper re-queues sessions with waiting messages and no live lease, in
   * milliseconds (only one worker sweeps at a time).
   *
   * @defaultValue 5000
   */
  readonly sweepMs?: number
  /**
   * How the worker opens a session's agent: the overrides (preset, model, options, tools,
   * instructions) for `resumeAgent`, or for `openAgent` when a submit asked to create the session;
   * or a function of the session id returning them. `queued` is always `'keep'`: prompts an
   * earlier owner logged run before new ones.
   *
   * @defaultValue `{}`
   */
  readonly agent?: ResumeOverrides | ((sessionId: string) => ResumeOverrides)
  /**
   * This worker's name in claims and reports: a non-empty string.
   *
   * @defaultValue `worker-` and random hex
   */
  readonly id?: string
  /**
   * Called with a failure that does not stop the worker (a session that could not be opened, a
   * database error while polling, a dropped `LISTEN` connection). Must not throw.
   *
   * @defaultValue logs a warning through the harness `logger` (stderr by default)
   */
  readonly onError?: (error: unknown, sessionId: string | undefined) => void
}

/** The worker's own options, checked, defaults filled. @internal */
export interface CheckedWorkerOptions {
  readonly concurrency: number
  readonly pollMs: number
  readonly listen: boolean
  readonly sweepMs: number
  readonly agent: (sessionId: string) => ResumeOverrides
  readonly id: string | undefined
  readonly onError: ((error: unknown, sessionId: string | undefined) => void) | undefined
  /** The rest: the harness options (without `persistence`). */
  readonly harness: Omit<HarnessOptions, 'persistence'>
}

const positiveInteger: OptionRule = (value) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? undefined : 'must be a positive integer'
const milliseconds: OptionRule = (value) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 10 && value <= 2_147_483_647
    ? undefined
    : 'must be an integer number of milliseconds from 10 to 2147483647'

const workerKeys = ['persistence', 'concurrency', 'pollMs', 'listen', 'sweepMs', 'agent', 'id', 'onError'] as const

const rules: Readonly<Record<string, OptionRule>> = Object.freeze({
  persistence: (value: unknown) =>
    typeof value === 'object' && value !== null ? undefined : 'must be a postgresPersistence(…) adapter',
  concurrency: positiveInteger,
  pollMs: milliseconds,
  listen: (value: unknown) => (typeof value === 'boolean' ? undefined : 'must be a boolean'),
  sweepMs: milliseconds,
  agent: (value: unknown) => {
    if (typeof value === 'function') return undefined
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return 'must be resume overrides or a function (sessionId) => overrides'
    const queued = (value as { queued?: unknown }).queued
    return queued === undefined || queued === 'keep'
      ? undefined
      : "queued must be 'keep' (a worker never discards prompts an earlier owner logged)"
  },
  id: (value: unknown) => (typeof value === 'string' && value.length > 0 ? undefined : 'must be a non-empty string'),
  onError: (value: unknown) => (typeof value === 'function' ? undefined : 'must be a function'),
})

/**
 * Checks the worker's own options and splits off the harness options (which `createHarness`
 * checks).
 *
 * @param options - what the caller passed
 * @returns the checked options
 * @throws `InvalidOptionsError` naming the first bad worker option (`persistence` is required)
 * @internal
 */
export function checkWorkerOptions(options: WorkerOptions): CheckedWorkerOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throwOptionIssues(
      [{ path: [], message: 'must be an options object { persistence, … }' }],
      options,
      'createWorker options',
    )
  }
  const own: Record<string, unknown> = {}
  const harness: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(options)) {
    if ((workerKeys as readonly string[]).includes(key)) own[key] = value
    else harness[key] = value
  }
  throwOptionIssues(
    optionIssues(own, rules, '{ persistence, concurrency?, pollMs?, listen?, sweepMs?, agent?, id?, onError? }', [
      'persistence',
    ]),
    options,
    'createWorker options',
  )
  const agent = options.agent ?? {}
  return {
    concurrency: options.concurrency ?? 8,
    pollMs: options.pollMs ?? 1000,
    listen: options.listen ?? true,
    sweepMs: options.sweepMs ?? 5000,
    agent: typeof agent === 'function' ? agent : () => agent,
    id: options.id,
    onError: options.onError,
    harness: harness as Omit<HarnessOptions, 'persistence'>,
  }
}
