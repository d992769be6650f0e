import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { loadMcpSdk } from './load-mcp-sdk.js'
import type { McpClientLike } from './mcp-client-like.js'

const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/

/** The fields every form of {@link McpServerSpec} shares. */
export interface McpServerCommon {
  /** The server's name: 1–32 characters of `[A-Za-z0-9_-]`; qualifies its tools' names on a collision. */
  readonly name: string
  /**
   * How long connecting and listing the tools may take, in milliseconds.
   *
   * @default 10000
   */
  readonly connectTimeoutMs?: number
  /**
   * The deadline of each call of the server's tools, in milliseconds (the tool's `timeoutMs`).
   *
   * @default no deadline besides the turn's
   */
  readonly callTimeoutMs?: number
}

/** A server started as a child process speaking MCP over its stdin and stdout. */
export interface McpStdioServerSpec extends McpServerCommon {
  /** The executable, e.g. `'npx'` or `process.execPath`. */
  readonly command: string
  /** Its arguments. */
  readonly args?: readonly string[]
  /**
   * The child's environment on top of a minimal safe base (`HOME`, `PATH`, `USER`, … and nothing
   * else): the parent's other variables, its secrets among them, never reach the server.
   */
  readonly env?: Readonly<Record<string, string>>
  /** The child's working directory. */
  readonly cwd?: string
}

/** A server reached over Streamable HTTP at a URL. */
export interface McpHttpServerSpec extends McpServerCommon {
  /** The server's MCP endpoint, `http:` or `https:` (e.g. `'http://127.0.0.1:3001/mcp'`). */
  readonly url: string | URL
  /** Headers sent with every request (an `Authorization` header, say); only these are sent. */
  readonly headers?: Readonly<Record<string, string>>
}

/** A client the caller connected itself (any transport, any client version with the same methods). */
export interface McpClientServerSpec extends McpServerCommon {
  /** The connected client; `close()` on the harness closes it. */
  readonly client: McpClientLike
  /**
   * Where the client's `callTool` takes its request options: `1` for `callTool(params,
   * resultSchema, options)` (the `@modelcontextprotocol/sdk` 1.x `Client`), `2` for
   * `callTool(params, options)` (the `@modelcontextprotocol/client` 2.x `Client`).
   *
   * @default 2 when the client has a `getProtocolEra` method (only 2.x clients do), else 1
   */
  readonly clientApi?: 1 | 2
}

/** How to reach an MCP server: a stdio command, a Streamable HTTP URL, or a connected client. */
export type McpServerSpec = McpStdioServerSpec | McpHttpServerSpec | McpClientServerSpec

/** A validated, frozen server declaration (what {@link mcpServer} returns). Inert until mounted. */
export type McpServer = McpServerSpec & McpServerKind

/** What {@link mcpServer} adds to a declaration. */
export interface McpServerKind {
  /** `'stdio'` for a command Yoke starts, `'http'` for a URL Yoke connects to, `'client'` for a connected client. */
  readonly kind: 'stdio' | 'http' | 'client'
}

function fail(field: string, reason: string, value: unknown): never {
  throw new InvalidArgumentError({ argument: `mcpServer ${field}`, reason, value })
}

function checkTimeout(field: string, value: unknown): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    fail(field, 'must be a positive finite number of milliseconds', value)
}

function checkStdio(spec: McpStdioServerSpec): void {
  if (typeof spec.command !== 'string' || spec.command.length === 0)
    fail('command', 'must be a non-empty string', spec.command)
  if (spec.args !== undefined && (!Array.isArray(spec.args) || !spec.args.every((arg) => typeof arg === 'string')))
    fail('args', 'must be an array of strings', spec.args)
  if (spec.env !== undefined) {
    if (typeof spec.env !== 'object' || spec.env === null || Array.isArray(spec.env))
      fail('env', 'must be an object of strings', spec.env)
    for (const [key, value] of Object.entries(spec.env))
      if (typeof value !== 'string') fail(`env.${key}`, 'must be a string', value)
  }
  if (spec.cwd !== undefined && (typeof spec.cwd !== 'string' || spec.cwd.length === 0))
    fail('cwd', 'must be a non-empty string', spec.cwd)
}

function checkHttp(spec: McpHttpServerSpec): URL {
  let url: URL
  try {
    url = new URL(spec.url)
  } catch {
    fail('url', 'must be an absolute http: or https: URL', spec.url)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail('url', 'must be an http: or https: URL', spec.url)
  if (spec.headers !== undefined) {
    if (typeof spec.headers !== 'object' || spec.headers === null || Array.isArray(spec.headers))
      fail('headers', 'must be an object of strings', spec.headers)
    for (const [key, value] of Object.entries(spec.headers))
      if (typeof value !== 'string') fail(`headers.${key}`, 'must be a string', value)
  }
  return url
}

/**
 * Declares an MCP server whose tools Yoke mounts: a stdio command (started when mounted, ended on
 * close), a Streamable HTTP URL, or an already connected client. Validates the declaration and connects nothing.
 *
 * @example
 * ```ts
 * const everything = mcpServer({
 *   name: 'everything',
 *   command: 'npx',
 *   args: ['-y', '@modelcontextprotocol/server-everything'],
 *   env: { API_KEY: process.env.EVERYTHING_KEY ?? '' }, // only what you pass reaches the server
 * })
 * const remote = mcpServer({ name: 'remote', url: 'http://127.0.0.1:3001/mcp', headers: { authorization: 'Bearer …' } })
 * ```
 *
 * @param spec - `name` and one of `command` (with `args`, `env`, `cwd`), `url` (with `headers`) or
 *   `client` (with `clientApi`); optional timeouts
 * @returns the frozen declaration, for {@link mcpPlugin} or {@link connectMcpServers}
 * @throws `InvalidArgumentError` naming the field (`mcpServer name`, `mcpServer command`, …);
 *   `MissingPeerError` for a stdio or URL server when `@modelcontextprotocol/sdk` is not installed
 */
export function mcpServer(spec: McpServerSpec): McpServer {
  if (typeof spec !== 'object' || spec === null) fail('spec', 'must be an object', spec)
  if (typeof spec.name !== 'string' || !SERVER_NAME.test(spec.name))
    fail('name', 'must be 1-32 characters of [A-Za-z0-9_-]', spec.name)
  checkTimeout('connectTimeoutMs', spec.connectTimeoutMs)
  checkTimeout('callTimeoutMs', spec.callTimeoutMs)
  const forms = ['command', 'url', 'client'].filter((key) => key in spec)
  if (forms.length !== 1) fail('spec', 'needs exactly one of command, url or client', spec)
  if ('url' in spec) {
    const url = checkHttp(spec)
    loadMcpSdk()
    return Object.freeze({
      ...spec,
      url: url.href,
      ...(spec.headers === undefined ? {} : { headers: Object.freeze({ ...spec.headers }) }),
      kind: 'http' as const,
    })
  }
  if ('client' in spec) {
    if (spec.clientApi !== undefined && spec.clientApi !== 1 && spec.clientApi !== 2)
      fail('clientApi', 'must be 1 or 2', spec.clientApi)
    const client = spec.client as Partial<McpClientLike> | null
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof client.listTools !== 'function' ||
      typeof client.callTool !== 'function' ||
      typeof client.close !== 'function'
    )
      fail('client', 'must be a connected MCP client with listTools, callTool and close', client)
    return Object.freeze({ ...spec, kind: 'client' as const })
  }
  checkStdio(spec)
  // Loaded now, so a missing SDK is reported where the server is declared, not at harness start.
  loadMcpSdk()
  return Object.freeze({
    ...spec,
    ...(spec.args === undefined ? {} : { args: Object.freeze([...spec.args]) }),
    ...(spec.env === undefined ? {} : { env: Object.freeze({ ...spec.env }) }),
    kind: 'stdio' as const,
  })
}
