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
 * PostgreSQL refuses a payload of 8000 bytes or more (and the append with it). Session ids are
 * short enough that this never happens through the adapter; the guard keeps an append from ever
 * failing for its notification.
 */
const PAYLOAD_LIMIT = 8000

/** What one notification on {@link APPEND_CHANNEL} says. @internal */
export type AppendNotification =
  /** The session `sessionId` of `schema` now continues at `nextSeq`. */
  | { readonly schema: string; readonly sessionId: string; readonly nextSeq: number }
  /** Some session of `schema` grew, which one did not fit the payload: every reader re-checks. */
  | { readonly schema: string; readonly sessionId?: undefined; readonly nextSeq?: undefined }

/**
 * The SQL expression that announces a write of a session of `schema`: `pg_notify` with the JSON
 * array `[schema, sessionId, nextSeq]`, or `[schema]` when that would not fit the payload. Sent
 * with the transaction's commit, never before, and not at all when it rolls back.
 *
 * @param schema - the schema (a plain identifier, checked by the factory)
 * @param sessionId - an SQL expression for the session id (a column)
 * @param nextSeq - an SQL expression for the session's new next seq (a column)
 * @returns the expression
 * @internal
 */
export function announceAppendSql(schema: string, sessionId: string, nextSeq: string): string {
  // The schema is a plain identifier: no quote to escape.
  const full = `json_build_array('${schema}', ${sessionId}, ${nextSeq})::text`
  return `pg_notify('${APPEND_CHANNEL}', CASE WHEN octet_length(${full}) < ${PAYLOAD_LIMIT} THEN ${full} ELSE json_build_array('${schema}')::text END)`
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
  if (!Array.isArray(value) || typeof value[0] !== 'string') return undefined
  const [schema, sessionId, nextSeq] = value as unknown[]
  if (value.length === 1) return { schema: schema as string }
  if (typeof sessionId !== 'string' || !Number.isSafeInteger(nextSeq)) return undefined
  return { schema: schema as string, sessionId, nextSeq: nextSeq as number }
}
