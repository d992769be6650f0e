import { loadPeer } from '../persistence/load-peer.js'
import type { McpClientLike } from './mcp-client-like.js'

/** The parts of `@modelcontextprotocol/sdk` that a stdio or URL server needs. */
export interface McpSdk {
  /** `new Client(info)` from `client/index.js`. */
  readonly Client: new (info: {
    name: string
    version: string
  }) => McpClientLike & {
    connect(transport: unknown, options?: { timeout?: number }): Promise<void>
    /** Called once the transport closed (a stdio child that exited, a closed client). */
    onclose?: (() => void) | undefined
    /** The connected transport; a Streamable HTTP one can end its session with `DELETE`. */
    readonly transport?: { terminateSession?: () => Promise<void> } | undefined
  }
  /** `new StdioClientTransport(params)` from `client/stdio.js`. */
  readonly StdioClientTransport: new (params: {
    command: string
    args?: string[]
    env?: Record<string, string>
    cwd?: string
    stderr?: 'ignore' | 'inherit' | 'pipe'
  }) => unknown
  /** The minimal environment the SDK gives a child (`HOME`, `PATH`, `USER`, … only). */
  readonly getDefaultEnvironment: () => Record<string, string>
  /** `new StreamableHTTPClientTransport(url, options)` from `client/streamableHttp.js`. */
  readonly StreamableHTTPClientTransport: new (
    url: URL,
    options?: { requestInit?: { headers?: Record<string, string> } },
  ) => unknown
}

const peer = {
  peer: '@modelcontextprotocol/sdk',
  subpath: 'yoke/mcp',
  install: 'npm install @modelcontextprotocol/sdk',
} as const

/**
 * Loads the SDK's client parts the moment a stdio or URL server is declared, so importing `yoke/mcp`
 * never needs the optional peer and a missing one is a `MissingPeerError` naming it.
 *
 * @returns the client class, the stdio and Streamable HTTP transports and the default environment
 * @throws `MissingPeerError` when `@modelcontextprotocol/sdk` is not installed
 * @internal
 */
export function loadMcpSdk(): McpSdk {
  const client = loadPeer({ ...peer, entry: '@modelcontextprotocol/sdk/client/index.js' }) as Pick<McpSdk, 'Client'>
  const stdio = loadPeer({ ...peer, entry: '@modelcontextprotocol/sdk/client/stdio.js' }) as Pick<
    McpSdk,
    'StdioClientTransport' | 'getDefaultEnvironment'
  >
  const http = loadPeer({ ...peer, entry: '@modelcontextprotocol/sdk/client/streamableHttp.js' }) as Pick<
    McpSdk,
    'StreamableHTTPClientTransport'
  >
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
  }
}
