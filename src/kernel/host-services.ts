import { randomUUID } from 'node:crypto'

/** The clock every timer and timestamp in a harness goes through; inject a fake one in tests. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /**
   * Calls `callback` once after `delayMs`.
   *
   * @returns a function that cancels the timer (a no-op once it fired)
   */
  setTimer(callback: () => void, delayMs: number): () => void
}

/** Makes a fresh id of a kind (`'session'`, `'message'`, `'compaction'`, …). */
export type IdSource = (kind: string) => string

/** A structured logger. Every method must not throw. */
export interface Logger {
  /** Debugging detail. */
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void
  /** Normal operation. */
  info(message: string, fields?: Readonly<Record<string, unknown>>): void
  /** Something unexpected that Yoke recovered from. */
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void
  /** A failure (a listener or cleanup threw, a write failed). */
  error(message: string, fields?: Readonly<Record<string, unknown>>): void
}

/** The longest delay Node's `setTimeout` honours. */
const MAX_TIMER_MS = 2_147_483_647

/**
 * The system clock: `Date.now()` and `setTimeout`.
 *
 * @returns a new clock
 */
export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimer(callback, delayMs) {
      // Node fires a delay above 2^31 − 1 ms after 1 ms: a longer one waits in legs of at most that.
      let handle: ReturnType<typeof setTimeout>
      const due = Date.now() + delayMs
      const arm = (remaining: number): void => {
        if (!(remaining > MAX_TIMER_MS)) {
          handle = setTimeout(callback, remaining)
          return
        }
        handle = setTimeout(() => arm(due - Date.now()), MAX_TIMER_MS)
      }
      arm(delayMs)
      return () => clearTimeout(handle)
    },
  }
}

/**
 * The default id source: a random UUID per id, whatever the kind.
 *
 * @returns a new id source
 */
export function randomIds(): IdSource {
  return () => randomUUID()
}

/**
 * The default logger: `warn` and `error` to stderr, `debug` and `info` dropped.
 *
 * @returns a new logger
 */
export function stderrLogger(): Logger {
  const write = (level: string, message: string, fields?: Readonly<Record<string, unknown>>): void => {
    let suffix = ''
    if (fields !== undefined) {
      try {
        suffix = ` ${JSON.stringify(fields, replaceErrors)}`
      } catch {
        suffix = ' [fields not serializable]'
      }
    }
    process.stderr.write(`yoke ${level}: ${message}${suffix}\n`)
  }
  return {
    debug() {},
    info() {},
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  }
}

function replaceErrors(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message }
  if (typeof value === 'bigint') return `${value}n`
  return value
}
