/**
 * The client side of the Server-Sent Events tests: a response's frames as `eventsource-parser`
 * reads them, until the test has enough or the stream ends.
 */
import { createParser } from 'eventsource-parser'

/** One frame as the client parsed it. */
export interface SseFrame {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string
}

/**
 * Reads `response`'s frames until `enough(frames)` holds or the body ends, then aborts the request
 * (the client disconnects) and cancels the body.
 *
 * @param response - a `fetch` response whose request `controller` can abort
 * @param controller - aborts the request once done
 * @param enough - when to stop reading (default: never, so the body's end)
 * @param timeoutMs - how long to read at most before failing
 * @returns the frames read (a chunk may hold more than `enough` asked for: they are kept)
 */
export async function readSseFrames(
  response: Response,
  controller: AbortController,
  enough: (frames: readonly SseFrame[]) => boolean = () => false,
  timeoutMs = 20_000,
): Promise<SseFrame[]> {
  const frames: SseFrame[] = []
  const parser = createParser({
    onEvent: (event) => frames.push({ id: event.id, event: event.event, data: event.data }),
  })
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const deadline = Date.now() + timeoutMs
  try {
    while (!enough(frames)) {
      if (Date.now() > deadline) throw new Error(`timed out after ${frames.length} frames`)
      const chunk = await reader.read()
      if (chunk.done) break
      parser.feed(chunk.value)
    }
  } finally {
    controller.abort()
    await reader.cancel().catch(() => {})
  }
  return frames
}
