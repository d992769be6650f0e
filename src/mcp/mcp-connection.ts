import { thrownMessage } from '../tools/tool-error-result.js'
import { loadMcpSdk, type McpSdk } from './load-mcp-sdk.js'
import type {
  McpCallToolResult,
  McpClientLike,
  McpLegacyToolResult,
  McpRequestOptions,
  McpToolList,
} from './mcp-client-like.js'
import type { McpClientServerSpec, McpServer } from './mcp-server.js'
import { McpServerError } from './mcp-server-error.js'

type OwnedClient = InstanceType<McpSdk['Client']>
type CallParams = { name: string; arguments?: Record<string, unknown> }

/** One server's live connection: the client of the moment, reopened when it went away. */
export interface McpConnection {
  /** Lists one page of tools. */
  listTools(cursor: string | undefined, options: McpRequestOptions): Promise<McpToolList>
  /**
   * Calls a tool. A stdio server that exited since the last call is started again first; a
   * Streamable HTTP server that answers 404 (its session expired) is initialized again and the
   * call sent once more.
   */
  callTool(params: CallParams, options: McpRequestOptions): Promise<McpCallToolResult | McpLegacyToolResult>
  /** Closes the client; no call reopens it afterwards. */
  close(): Promise<void>
}

/**
 * Runs `run` under a deadline, turning any failure into an `McpServerError` naming the server.
 *
 * @internal
 * @param server - the server's name
 * @param what - the step, for the reason (`'initialize'`, `'tools/list'`)
 * @param ms - the deadline
 * @param run - the step, given the deadline's signal
 * @returns what `run` resolved to
 * @throws {@link McpServerError} when the step failed or timed out
 */
export async function withTimeout<T>(
  server: string,
  what: string,
  ms: number,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = AbortSignal.timeout(ms)
  try {
    return await run(signal)
  } catch (error) {
    const reason = signal.aborted ? `${what} timed out after ${ms} ms` : `${what} failed: ${thrownMessage(error)}`
    throw new McpServerError({ server, reason, cause: error })
  }
}

function transportOf(server: McpServer, sdk: McpSdk): unknown {
  if ('url' in server)
    return new sdk.StreamableHTTPClientTransport(
      new URL(server.url),
      server.headers === undefined ? undefined : { requestInit: { headers: { ...server.headers } } },
    )
  if (!('command' in server)) throw new Error('an injected client is never reopened')
  return new sdk.StdioClientTransport({
    command: server.command,
    ...(server.args === undefined ? {} : { args: [...server.args] }),
    // The SDK's safe base plus what the caller passed: nothing else of the parent's environment.
    env: { ...sdk.getDefaultEnvironment(), ...server.env },
    ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
    stderr: 'ignore',
  })
}

async function openOwned(server: McpServer, timeoutMs: number): Promise<OwnedClient> {
  const sdk = loadMcpSdk()
  const transport = transportOf(server, sdk)
  const client = new sdk.Client({ name: 'yoke', version: '0' })
  await withTimeout(server.name, 'initialize', timeoutMs, async (signal) => {
    const abandoned = new Promise<never>((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true })
    })
    try {
      await Promise.race([client.connect(transport, { timeout: timeoutMs }), abandoned])
    } catch (error) {
      await client.close().catch(() => undefined)
      throw error
    }
  })
  return client
}

/**
 * Tells a Streamable HTTP server that the session is over (`DELETE`), so it frees it now rather
 * than when it times out; bounded, since closing must not hang on a server that stopped answering.
 */
async function endSession(client: OwnedClient, timeoutMs: number): Promise<void> {
  const terminate = client.transport?.terminateSession
  if (terminate === undefined) return
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs)
  })
  await Promise.race([terminate.call(client.transport).catch(() => undefined), late])
  clearTimeout(timer)
}

/** A Streamable HTTP answer of 404 to a request carrying a session id: the server forgot the session. */
function isExpiredSession(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 404
}

/** Whether an injected client's `callTool` takes the options second (the 2.x client) or third. */
function clientApiOf(server: McpClientServerSpec): 1 | 2 {
  if (server.clientApi !== undefined) return server.clientApi
  return typeof (server.client as { getProtocolEra?: unknown }).getProtocolEra === 'function' ? 2 : 1
}

function injected(server: McpClientServerSpec): McpConnection {
  const { client } = server
  const api = clientApiOf(server)
  return {
    listTools: (cursor, options) => client.listTools(cursor === undefined ? undefined : { cursor }, options),
    callTool: (params, options) =>
      api === 2
        ? // The 2.x client reads its options from the second argument.
          (Reflect.apply(client.callTool, client, [params, options]) as ReturnType<McpClientLike['callTool']>)
        : client.callTool(params, undefined, options),
    close: () => client.close(),
  }
}

/**
 * Connects one server: an injected client as it is, or a stdio child / Streamable HTTP session
 * that this connection owns and reopens when it went away.
 *
 * @internal
 * @param server - the declaration
 * @param timeoutMs - the deadline of `initialize` (and of every later reopening)
 * @returns the connection
 * @throws {@link McpServerError} when `initialize` fails or times out
 */
export async function openMcpConnection(server: McpServer, timeoutMs: number): Promise<McpConnection> {
  if ('client' in server) return injected(server)
  let closed = false
  let current: OwnedClient | undefined
  let opening: Promise<OwnedClient> | undefined
  const adopt = (client: OwnedClient): OwnedClient => {
    current = client
    // A child that exited (or a session the transport dropped) clears the slot, so the next call reopens.
    client.onclose = () => {
      if (current === client) current = undefined
    }
    return client
  }
  const ready = (): Promise<OwnedClient> => {
    if (closed) return Promise.reject(new Error('the server was closed'))
    if (current !== undefined) return Promise.resolve(current)
    opening ??= openOwned(server, timeoutMs).then(
      async (client) => {
        opening = undefined
        if (closed) {
          await client.close().catch(() => undefined)
          throw new Error('the server was closed')
        }
        return adopt(client)
      },
      (error: unknown) => {
        opening = undefined
        throw error
      },
    )
    return opening
  }
  // Clients dropped because their session expired: a call still waiting on one failed with it.
  const expired = new WeakSet<OwnedClient>()
  const reopen = async (stale: OwnedClient): Promise<OwnedClient> => {
    if (current === stale) current = undefined
    expired.add(stale)
    await stale.close().catch(() => undefined)
    return ready()
  }
  adopt(await openOwned(server, timeoutMs))
  return {
    listTools: async (cursor, options) =>
      (await ready()).listTools(cursor === undefined ? undefined : { cursor }, options),
    callTool: async (params, options) => {
      const client = await ready()
      try {
        return await client.callTool(params, undefined, options)
      } catch (error) {
        // Not retried: the server may have done part of the work before it died.
        if ('command' in server && !closed && current !== client && options.signal?.aborted !== true)
          throw new Error(
            `the server exited during the call and is started again on the next one (${thrownMessage(error)})`,
            { cause: error },
          )
        // Retried once only, and never after the turn gave up: a second 404 is the server's answer.
        // A call that was waiting on the session another call found expired is retried as well.
        const retry = 'url' in server && (isExpiredSession(error) || expired.has(client))
        if (!retry || options.signal?.aborted === true) throw error
        const fresh = await reopen(client)
        return fresh.callTool(params, undefined, options)
      }
    },
    close: async () => {
      closed = true
      const client = current ?? (await opening?.catch(() => undefined))
      current = undefined
      if (client === undefined) return
      await endSession(client, timeoutMs)
      await client.close()
    },
  }
}
