/**
 * The notification every committed append sends when `notify` is on: one channel for every schema,
 * a payload of ids only (the schema, the session id, the session's new next seq), so a listener in
 * any process knows which log grew and reads the events themselves from the tables.
 *
 * @module
 */

/**
 * The channel appends are announced on (`LISTEN yoke_append`). One for every schema: the payload
 * names the schema.
 *
 * @internal
 */
export const APPEND_CHANNEL = 'yoke_append'

/**
 * PostgreSQL refuses a payload of 8000 bytes or more. Session ids are short enough that this never
 * happens through the adapter; the guard keeps an announcement from ever failing for its size.
 */
const PAYLOAD_LIMIT = 8000

/** What one notification on {@link APPEND_CHANNEL} says. @internal */
export type AppendNotification =
  /** The session `sessionId` of `schema` now continues at `nextSeq` (unknown after a repair). */
  | { readonly schema: string; readonly sessionId: string; readonly nextSeq?: number }
  /** Some session of `schema` grew, which one did not fit the payload: every reader re-checks. */
  | { readonly schema: string; readonly sessionId?: undefined; readonly nextSeq?: undefined }

/**
 * The payload announcing a write: the JSON array `[schema, sessionId, nextSeq]` (`[schema,
 * sessionId]` when the next seq is not known), or `[schema]` when that would not fit.
 *
 * @param schema - the schema
 * @param sessionId - the session written
 * @param nextSeq - its next seq after the write, when known
 * @returns the payload
 * @internal
 */
export function appendPayload(schema: string, sessionId: string, nextSeq: number | undefined): string {
  const payload = JSON.stringify(nextSeq === undefined ? [schema, sessionId] : [schema, sessionId, nextSeq])
  return Buffer.byteLength(payload) < PAYLOAD_LIMIT ? payload : JSON.stringify([schema])
}

/**
 * The statement that sends `payload`, as one round trip: its own short transaction, committed
 * without waiting for the disk (`synchronous_commit = off`). PostgreSQL serializes the end of
 * every commit that notifies under one database-wide lock; a notification inside the append's
 * transaction would hold that lock across the append's disk flush, so concurrent appends could no
 * longer share flushes (several times fewer commits per second on a real disk).
 *
 * @param payload - from {@link appendPayload}
 * @returns the statements, for the simple query protocol (no parameters)
 * @internal
 */
export function announceStatement(payload: string): string {
  // A literal, since a multi-statement query takes no parameters: standard strings double quotes.
  const literal = `'${payload.replaceAll("'", "''")}'`
  return `BEGIN; SET LOCAL synchronous_commit = off; SELECT pg_notify('${APPEND_CHANNEL}', ${literal}); COMMIT`
}

/**
 * Reads a payload of {@link APPEND_CHANNEL}.
 *
 * @param payload - the notification's payload
 * @returns what it says, or `undefined` for a payload no Yoke sent (ignored)
 * @internal
 */
export function parseAppendNotification(payload: string | undefined): AppendNotification | undefined {
  if (payload === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(payload)
  } catch {
    return undefined
  }
  if (!Array.isArray(value) || typeof value[0] !== 'string' || value.length > 3) return undefined
  const [schema, sessionId, nextSeq] = value as unknown[]
  if (value.length === 1) return { schema: schema as string }
  if (typeof sessionId !== 'string') return undefined
  if (value.length === 2) return { schema: schema as string, sessionId }
  if (!Number.isSafeInteger(nextSeq)) return undefined
  return { schema: schema as string, sessionId, nextSeq: nextSeq as number }
}
