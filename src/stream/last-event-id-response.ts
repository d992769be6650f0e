import type { LastEventIdError } from '../errors/last-event-id-error.js'

/**
 * @internal A refused `Last-Event-ID` as a 400 response with `{ error: { code, message, value } }`.
 *
 * @param error - why the id was refused
 * @returns the response
 */
export function lastEventIdResponse(error: LastEventIdError): Response {
  return Response.json(
    { error: { code: error.code, message: error.message, value: error.value } },
    { status: 400, headers: { 'cache-control': 'no-cache' } },
  )
}
