/**
 * Joins byte chunks into one array (the one chunk itself when there is exactly one).
 *
 * @param chunks - the pieces, in order
 * @returns their concatenation
 * @internal
 */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0]
  let total = 0
  for (const chunk of chunks) total += chunk.length
  const joined = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    joined.set(chunk, at)
    at += chunk.length
  }
  return joined
}
