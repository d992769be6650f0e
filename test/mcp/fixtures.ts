/**
 * What the MCP test files share: the reference server's entry point, the harnesses a test opened
 * (closed after each test, which also ends their servers), and a process probe.
 */
import { createRequire } from 'node:module'
import { afterEach } from 'vitest'
import type { Harness } from 'yoke'

/** The entry of `@modelcontextprotocol/server-everything`, run with `node` as a stdio server. */
export const everythingBin = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
)

/**
 * A list to push every harness a test opens onto; each is closed after the test, in order.
 *
 * @returns the list
 */
export function useHarnesses(): Harness[] {
  const open: Harness[] = []
  afterEach(async () => {
    for (const harness of open.splice(0)) await harness.close()
  })
  return open
}

/**
 * Whether a process is still alive (signal 0 probes without signalling).
 *
 * @param pid - the process id
 * @returns `true` while it exists
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
