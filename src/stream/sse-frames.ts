import type { SessionEvent } from '../session/session-event.js'

const encoder = new TextEncoder()

/**
 * @internal One committed event as an SSE frame: `id:` its seq, `event:` its type, `data:` the
 * whole event as one line of JSON (JSON text never holds a raw line break).
 */
export function eventFrame(event: SessionEvent): Uint8Array {
  return encoder.encode(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
}

/** @internal A failure as an `event: error` frame without an id, so the reader's resume point stays. */
export function errorFrame(error: unknown): Uint8Array {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'INTERNAL'
  const message = error instanceof Error ? error.message : String(error)
  return encoder.encode(`event: error\ndata: ${JSON.stringify({ code, message })}\n\n`)
}

/** @internal A comment line: readers ignore it; it keeps proxies from closing an idle connection. */
export function commentFrame(text: string): Uint8Array {
  return encoder.encode(`: ${text}\n\n`)
}

/** @internal The reconnection delay a reader should use. */
export function retryFrame(milliseconds: number): Uint8Array {
  return encoder.encode(`retry: ${milliseconds}\n\n`)
}
