/**
 * A loopback TCP proxy for the tests that take a database away mid-operation: the adapter connects
 * to the proxy, the proxy to the real server, and the test cuts the line (every open connection
 * reset, new ones refused) or lets a COMMIT through while losing its reply, then restores it.
 */
import { connect, createServer, type Server, type Socket } from 'node:net'

/** A running proxy. */
export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number
  /** Resets every open connection and refuses new ones until {@link TcpProxy.restore}. */
  cut(): void
  /** Accepts and forwards connections again. */
  restore(): void
  /**
   * Holds every byte in both directions (open connections stay open, new ones are accepted but
   * hear nothing), as a database that hangs: nothing fails, nothing answers.
   */
  freeze(): void
  /** Delivers what was held, in order, and forwards again. */
  thaw(): void
  /**
   * The next time a client sends a statement containing `marker`, forwards it to the server, then
   * drops the server's reply and resets that connection after `afterMs`: the statement ran, the
   * client never learns it did.
   *
   * @returns resolves once it happened
   */
  loseReplyTo(marker: string, afterMs?: number): Promise<void>
  /** How many connections it has forwarded so far. */
  readonly connections: number
  /** Stops listening and resets every connection. */
  close(): Promise<void>
}

/**
 * Starts a proxy on 127.0.0.1 to `target`.
 *
 * @param target - the server's host and port
 * @returns the proxy
 */
export async function startTcpProxy(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>()
  let down = false
  let connections = 0
  let pendingLoss: { marker: Buffer; afterMs: number; done: () => void } | undefined
  let frozen = false
  /** What a freeze held: the socket to deliver to and the bytes, in arrival order. */
  const held: { readonly to: Socket; readonly chunk: Buffer }[] = []
  const send = (to: Socket, chunk: Buffer): void => {
    if (frozen) held.push({ to, chunk })
    else if (!to.destroyed) to.write(chunk)
  }

  const server: Server = createServer((client) => {
    if (down) {
      client.resetAndDestroy()
      return
    }
    connections += 1
    const upstream = connect(target.port, target.host)
    open.add(client)
    open.add(upstream)
    let losing = false
    const end = (): void => {
      open.delete(client)
      open.delete(upstream)
      if (!client.destroyed) client.resetAndDestroy()
      if (!upstream.destroyed) upstream.destroy()
    }
    client.on('error', end)
    upstream.on('error', end)
    client.on('close', end)
    upstream.on('close', end)
    client.on('data', (chunk: Buffer) => {
      const loss = pendingLoss
      if (loss !== undefined && chunk.includes(loss.marker)) {
        pendingLoss = undefined
        losing = true
        setTimeout(() => {
          end()
          loss.done()
        }, loss.afterMs)
      }
      send(upstream, chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (!losing) send(client, chunk)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address')

  const resetAll = (): void => {
    for (const socket of open) socket.resetAndDestroy()
    open.clear()
  }
  return {
    port: address.port,
    get connections() {
      return connections
    },
    cut() {
      down = true
      resetAll()
    },
    restore() {
      down = false
    },
    freeze() {
      frozen = true
    },
    thaw() {
      frozen = false
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk)
    },
    loseReplyTo(marker, afterMs = 100) {
      return new Promise((resolve) => {
        pendingLoss = { marker: Buffer.from(marker, 'utf8'), afterMs, done: resolve }
      })
    },
    async close() {
      down = true
      resetAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/**
 * The connection string `connectionString` with its host and port replaced by the proxy's.
 *
 * @param connectionString - a `postgresql://` URL
 * @param proxy - the proxy
 * @returns the URL through the proxy
 */
export function throughProxy(connectionString: string, proxy: TcpProxy): string {
  const url = new URL(connectionString)
  url.hostname = '127.0.0.1'
  url.port = String(proxy.port)
  return url.toString()
}

/**
 * The host and port a `postgresql://` URL names.
 *
 * @param connectionString - the URL
 * @returns host and port (5432 when none is given)
 */
export function serverOf(connectionString: string): { readonly host: string; readonly port: number } {
  const url = new URL(connectionString)
  return { host: url.hostname === '' ? '127.0.0.1' : url.hostname, port: url.port === '' ? 5432 : Number(url.port) }
}
