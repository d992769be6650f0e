/**
 * @internal The headers of an event-stream response: the caller's extra ones, then the stream's
 * own, which win.
 *
 * @param extra - the caller's headers
 * @param own - the stream's own headers (its content type and any protocol marker)
 * @returns the headers, with `cache-control: no-cache` and `x-accel-buffering: no`
 */
export function eventStreamHeaders(
  extra: Readonly<Record<string, string>> | undefined,
  own: Readonly<Record<string, string>>,
): Headers {
  const headers = new Headers(extra)
  for (const [name, value] of Object.entries(own)) headers.set(name, value)
  headers.set('cache-control', 'no-cache')
  // Asks nginx-style proxies not to hold the stream back.
  headers.set('x-accel-buffering', 'no')
  return headers
}
