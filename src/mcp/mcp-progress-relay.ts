import type { JsonObject } from '../session/json-value.js'
import type { McpProgress } from './mcp-client-like.js'

/** The least time between two progress events of one call. */
const PROGRESS_INTERVAL_MS = 100
/** A server's progress message is cut here: a live event is a status line, not a payload. */
const MAX_MESSAGE_LENGTH = 1_000

/** Passes a call's progress notifications on, coalesced. */
export interface McpProgressRelay {
  /** The SDK's `onprogress` callback. */
  readonly onprogress: (progress: McpProgress) => void
  /** Reports the notification still held back, if any, and stops the timer (call it when the call settled). */
  flush(): void
}

function progressValue(progress: McpProgress): JsonObject | undefined {
  if (typeof progress?.progress !== 'number' || !Number.isFinite(progress.progress)) return undefined
  const value: { progress: number; total?: number; message?: string } = { progress: progress.progress }
  if (typeof progress.total === 'number' && Number.isFinite(progress.total)) value.total = progress.total
  if (typeof progress.message === 'string') value.message = progress.message.slice(0, MAX_MESSAGE_LENGTH)
  return value
}

/**
 * Relays a call's progress notifications to `report` at most once every 100 ms: the first at
 * once, later ones coalesced so only the newest waiting one is kept. A server that floods
 * notifications therefore costs one small object and one timer, whatever it sends.
 *
 * @internal
 * @param report - the call's `reportProgress` (live `tools/progress`, never logged)
 * @returns the relay
 */
export function createMcpProgressRelay(report: (progress: JsonObject) => void): McpProgressRelay {
  let lastAt = Number.NEGATIVE_INFINITY
  let waiting: JsonObject | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  const send = (value: JsonObject): void => {
    lastAt = Date.now()
    waiting = undefined
    try {
      report(value)
    } catch {
      // A listener's failure must not reach the SDK's notification handler (it would be logged there).
    }
  }
  return {
    onprogress(progress) {
      const value = progressValue(progress)
      if (value === undefined) return
      const wait = lastAt + PROGRESS_INTERVAL_MS - Date.now()
      if (wait <= 0 && timer === undefined) return send(value)
      waiting = value
      timer ??= setTimeout(
        () => {
          timer = undefined
          if (waiting !== undefined) send(waiting)
        },
        Math.max(wait, 0),
      )
    },
    flush() {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      if (waiting !== undefined) send(waiting)
    },
  }
}
