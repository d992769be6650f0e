import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A server listening on a free loopback port. */
export interface Loopback {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string
  /** Drops every connection and stops listening. */
  close(): Promise<void>
}

/**
 * Starts `server` on a free port of 127.0.0.1.
 *
 * @param server - a node:http server not listening yet
 * @returns its origin and how to close it
 */
export async function listenOnLoopback(server: Server): Promise<Loopback> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // A streaming response never ends on its own; closing only the listener would wait for it.
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
