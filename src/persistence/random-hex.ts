import { randomFillSync } from 'node:crypto'

/** Random bytes drawn from the system CSPRNG in blocks; each byte is handed out once. */
const pool = Buffer.alloc(4096)
let offset = pool.length

/**
 * `bytes` random bytes as lowercase hex (like `randomBytes(bytes).toString('hex')`), taken from a
 * pool refilled from the CSPRNG 4 KiB at a time: a lease token costs no system call of its own.
 *
 * @param bytes - how many random bytes (at most 4096)
 * @returns `2 × bytes` hex digits
 * @internal
 */
export function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const text = pool.toString('hex', offset, offset + bytes)
  offset += bytes
  return text
}
