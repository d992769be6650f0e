/**
 * CRC-32 (ISO 3309: the gzip trailer's checksum and the JSONL batch check), in one call or running
 * over pieces.
 *
 * @module
 */

/**
 * Continues a CRC-32 over more bytes: `crc32Update(crc32Update(-1, a), b)`, finished with
 * `crc32Final`, equals `crc32(a ++ b)`.
 *
 * @param state - the running state: {@link CRC32_START}, or what the last update returned
 * @param bytes - the next bytes
 * @returns the new state
 * @internal
 */
export function crc32Update(state: number, bytes: Uint8Array): number {
  let crc = state
  for (let index = 0; index < bytes.length; index++) {
    crc = (CRC_TABLE[(crc ^ (bytes[index] ?? 0)) & 0xff] ?? 0) ^ (crc >>> 8)
  }
  return crc
}

/**
 * Finishes a running CRC-32 state.
 *
 * @param state - the running state
 * @returns the unsigned checksum
 * @internal
 */
export function crc32Final(state: number): number {
  return (state ^ -1) >>> 0
}

/**
 * The initial state of a running CRC-32.
 *
 * @internal
 */
export const CRC32_START = -1

const CRC_TABLE = (() => {
  const table = new Int32Array(256)
  for (let index = 0; index < 256; index++) {
    let value = index
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1
    table[index] = value
  }
  return table
})()

/**
 * CRC-32 of `bytes`.
 *
 * @param bytes - the data
 * @returns the unsigned checksum
 * @internal
 */
export function crc32(bytes: Uint8Array): number {
  return crc32Final(crc32Update(CRC32_START, bytes))
}
