/**
 * Splits a Chat Completions response body into SSE events at their blank lines, so that events
 * of a learned shape are read straight from the bytes ({@link DeltaTemplates}) and everything
 * else reaches the SSE parser as text, whole events at a time.
 *
 * @module
 */
import { Buffer } from 'node:buffer'
import type { AppendDelta, DeltaTemplates } from './delta-templates.js'

/**
 * Where body bytes go.
 *
 * @internal
 */
export interface BodySplitterOptions {
  /** The learned shapes; without them every byte goes to `text`. */
  readonly templates: DeltaTemplates | undefined
  /** Receives decoded body text, in order (to feed the SSE parser). */
  readonly text: (text: string) => void
  /** Receives the delta of an event read through a shape. */
  readonly append: AppendDelta
  /** Whether the consumer stopped (its `finish` is out): the rest of the bytes is dropped. */
  readonly stopped: () => boolean
}

/**
 * The splitter of one response body.
 *
 * @internal
 */
export interface BodySplitter {
  /**
   * Feeds the next bytes of the body (any split).
   *
   * @param bytes - the bytes, as read
   */
  push(bytes: Uint8Array): void
  /** The body ended: the bytes held back go to `text`, and the decoder is flushed. */
  end(): void
}

const LF = 0x0a
const CR = 0x0d
const BOM = Buffer.from([0xef, 0xbb, 0xbf])
/** Bytes held back waiting for a blank line before the rest of the body goes to the parser as text. */
const MAX_HELD_BYTES = 256 * 1024
const INITIAL_SCRATCH_BYTES = 16 * 1024

/**
 * Creates the splitter of one body. While the body's lines end with a bare LF, the bytes up to
 * each blank line (`\n\n`) are one whole event: one matching a learned shape is read from its
 * bytes, any other is decoded and handed to `text` whole, so the parser is always between events
 * when a shape is tried. A CR anywhere (CRLF or CR line ends, which the parser handles), an event
 * longer than 256 KiB, or no shapes at all switch the rest of the body to plain streaming decoding:
 * every byte to `text`. Either way the text is what a streaming UTF-8 decoder gives: the stream's
 * leading BOM is dropped, a later one kept, and a character split across reads is joined. The
 * bytes of a read are copied once, into a scratch buffer the splitter reuses, after the bytes it
 * held back from the read before.
 *
 * @param options - the shapes and the receivers
 * @returns the splitter
 * @internal
 */
export function createBodySplitter(options: BodySplitterOptions): BodySplitter {
  const { templates, text, append, stopped } = options
  // One decoder throughout; the stream's leading BOM is dropped by hand, so a BOM later in the
  // body (after a switch, or at an event's start) is kept, as a streaming decoder keeps it.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  let streaming = templates === undefined
  /** Whether the body's first three bytes are still to be checked for a BOM. */
  let atStart = true
  let scratch = Buffer.allocUnsafe(0)
  /** The bytes held back (an event not ended yet) at the start of `scratch`. */
  let held = 0

  const stream = (bytes: Uint8Array): void => {
    streaming = true
    held = 0
    if (bytes.length > 0) text(decoder.decode(bytes, { stream: true }))
  }

  /** `scratch` holding the held bytes and then `input`; grown when needed. */
  const gather = (input: Uint8Array): Buffer => {
    const total = held + input.length
    if (scratch.length < total) {
      const grown = Buffer.allocUnsafe(Math.max(total, INITIAL_SCRATCH_BYTES, scratch.length * 2))
      scratch.copy(grown, 0, 0, held)
      scratch = grown
    }
    scratch.set(input, held)
    return scratch.subarray(0, total)
  }

  return {
    push(input) {
      if (stopped() || input.length === 0) return
      if (streaming) {
        stream(input)
        return
      }
      let bytes = gather(input)
      if (atStart) {
        if (bytes.length < BOM.length && BOM.subarray(0, bytes.length).equals(bytes)) {
          held = bytes.length
          return
        }
        atStart = false
        if (bytes.subarray(0, BOM.length).equals(BOM)) bytes = bytes.subarray(BOM.length)
      }
      // (Buffer's indexOf is a native byte search; a Uint8Array's scans element by element.)
      if (bytes.indexOf(CR, Math.max(0, bytes.length - input.length)) >= 0) {
        stream(bytes)
        return
      }
      let start = 0
      let lineEnd = bytes.indexOf(LF, start)
      while (lineEnd >= 0 && !stopped()) {
        if (bytes[lineEnd + 1] !== LF) {
          // A line inside an event (another field, or data over several lines): look further.
          lineEnd = bytes.indexOf(LF, lineEnd + 1)
          continue
        }
        const next = lineEnd + 2
        if (!(templates as DeltaTemplates).match(bytes, start, lineEnd, append))
          text(decoder.decode(bytes.subarray(start, next)))
        start = next
        lineEnd = bytes.indexOf(LF, start)
      }
      if (stopped()) return
      const rest = bytes.length - start
      // A body that never leaves a blank line is read as a plain stream from here on.
      if (rest > MAX_HELD_BYTES) {
        stream(bytes.subarray(start))
        return
      }
      // The held bytes move to the front of the scratch buffer (`bytes` may start after a BOM);
      // Buffer#copy is a native memmove.
      const offset = bytes.byteOffset - scratch.byteOffset
      if (rest > 0) scratch.copy(scratch, 0, offset + start, offset + bytes.length)
      held = rest
    },
    end() {
      if (stopped()) return
      if (held > 0) {
        const rest = scratch.subarray(0, held)
        held = 0
        // Fewer than three bytes that begin a BOM, and nothing more: they are the body's text.
        atStart = false
        text(decoder.decode(rest, { stream: true }))
      }
      const tail = decoder.decode()
      if (tail !== '') text(tail)
    },
  }
}
