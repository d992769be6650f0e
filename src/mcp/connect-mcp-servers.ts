// Public types come from the main entry, so the subpath's declarations share them with `yoke`.
import type { JsonObject, ToolDefinition, ToolReturn } from 'yoke'
import { defineTool } from '../tools/define-tool.js'
import { thrownMessage } from '../tools/tool-error-result.js'
import { mcpCallResult } from './mcp-call-result.js'
import type { McpCallToolResult, McpToolInfo } from './mcp-client-like.js'
import { type McpConnection, openMcpConnection, withTimeout } from './mcp-connection.js'
import { createMcpProgressRelay } from './mcp-progress-relay.js'
import type { McpServer } from './mcp-server.js'
import { McpServerError } from './mcp-server-error.js'
import { type McpRenameReason, modelToolName } from './mcp-tool-name.js'

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000
/** A server that pages its tool list forever is cut off here rather than looping. */
const MAX_TOOL_PAGES = 100
/** The longest timer Node keeps: "no deadline" for the SDK, whose own default would cut calls at 60 s. */
const NO_DEADLINE_MS = 2_147_483_647

/** One tool as mounted: where it comes from, the name the model sees and how it is scheduled. */
export interface McpMountedTool {
  /** The server's name. */
  readonly server: string
  /** The tool's name on the server. */
  readonly tool: string
  /** The tool's name in Yoke's registry, the one the model sees. */
  readonly name: string
  /** Why `name` differs from `tool`, when it does. */
  readonly renamed?: McpRenameReason
  /** `'parallel'` when the server's hints say the tool is read-only, or idempotent and not destructive. */
  readonly mode: 'parallel' | 'exclusive'
}

/** The tools of connected MCP servers (what {@link connectMcpServers} returns). */
export interface McpToolset extends AsyncDisposable {
  /** The tool definitions, ready for `tools.register` (globally or in one agent's scope). */
  readonly tools: readonly ToolDefinition[]
  /** What was mounted from where, in the servers' order; renamed tools say why. */
  readonly mounted: readonly McpMountedTool[]
  /** Closes every server (stdio children end); calls after the first do nothing. */
  close(): Promise<void>
}

interface ListedServer {
  readonly server: McpServer
  readonly client: McpConnection
  readonly tools: readonly McpToolInfo[]
}

/** Whether the server's hints allow running the tool next to others: read-only, or idempotent and surely not destructive. */
function isParallel(tool: McpToolInfo): boolean {
  const hints = tool.annotations
  if (hints === undefined) return false
  if (hints.readOnlyHint === true) return true
  // An absent destructiveHint means "may destroy": fail closed.
  return hints.idempotentHint === true && hints.destructiveHint === false
}

async function listAll(server: McpServer, client: McpConnection, timeoutMs: number): Promise<McpToolInfo[]> {
  return withTimeout(server.name, 'tools/list', timeoutMs, async (signal) => {
    const tools: McpToolInfo[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const list = await client.listTools(cursor, { signal, timeout: timeoutMs })
      tools.push(...list.tools)
      cursor = list.nextCursor
      if (cursor === undefined) return tools
    }
    throw new Error(`the tool list has more than ${MAX_TOOL_PAGES} pages`)
  })
}

function checkUnique(server: string, tools: readonly McpToolInfo[]): void {
  const seen = new Set<string>()
  for (const tool of tools) {
    if (typeof tool?.name !== 'string' || tool.name.length === 0)
      throw new McpServerError({ server, reason: `lists a tool without a name (${JSON.stringify(tool)})` })
    if (seen.has(tool.name)) throw new McpServerError({ server, reason: `lists the tool "${tool.name}" twice` })
    seen.add(tool.name)
  }
}

/** The model-facing names: each tool's own (cleaned) name, qualified by its server where two servers share one. */
function assignNames(listed: readonly ListedServer[]): Map<McpToolInfo, { name: string; renamed?: McpRenameReason }> {
  const owners = new Map<string, Set<string>>()
  for (const { server, tools } of listed)
    for (const tool of tools) {
      const name = modelToolName(tool.name)
      owners.set(name, (owners.get(name) ?? new Set()).add(server.name))
    }
  const names = new Map<McpToolInfo, { name: string; renamed?: McpRenameReason }>()
  const taken = new Map<string, string>()
  for (const { server, tools } of listed)
    for (const tool of tools) {
      const plain = modelToolName(tool.name)
      const shared = (owners.get(plain)?.size ?? 0) > 1
      const name = shared ? modelToolName(`${server.name}_${tool.name}`) : plain
      const previous = taken.get(name)
      if (previous !== undefined)
        throw new McpServerError({
          server: server.name,
          reason: `the tool "${tool.name}" would be named "${name}", already taken by "${previous}"`,
        })
      taken.set(name, `${server.name}/${tool.name}`)
      const renamed: McpRenameReason | undefined = shared
        ? 'collision'
        : name === tool.name
          ? undefined
          : 'invalid-name'
      names.set(tool, renamed === undefined ? { name } : { name, renamed })
    }
  return names
}

function defineMcpTool(entry: ListedServer, tool: McpToolInfo, name: string): ToolDefinition {
  const { server, client } = entry
  const parallel = isParallel(tool)
  const origin = { server: server.name, tool: tool.name }
  const description =
    tool.description !== undefined && tool.description.length > 0
      ? tool.description
      : (tool.title ?? tool.annotations?.title ?? `The tool "${tool.name}" of the MCP server "${server.name}".`)
  try {
    return defineTool({
      name,
      description: description.length > 0 ? description : `The tool "${tool.name}" of the MCP server "${server.name}".`,
      input: tool.inputSchema as JsonObject,
      isConcurrencySafe: () => parallel,
      ...(server.callTimeoutMs === undefined ? {} : { timeoutMs: server.callTimeoutMs }),
      execute: async (args, context): Promise<ToolReturn> => {
        let result: Awaited<ReturnType<McpConnection['callTool']>>
        const progress = createMcpProgressRelay((value) => context.reportProgress(value))
        try {
          result = await client.callTool(
            { name: tool.name, arguments: args },
            {
              signal: context.signal,
              timeout: server.callTimeoutMs ?? NO_DEADLINE_MS,
              onprogress: progress.onprogress,
            },
          )
        } catch (error) {
          // The client rejects once the signal aborts (after telling the server); returning lets
          // Yoke record the call as aborted or timed out instead of as a failure.
          if (context.signal.aborted) return undefined
          // A failed restart already names the server; its reason is enough.
          const message = McpServerError.is(error) ? error.reason : thrownMessage(error)
          throw new Error(`MCP server "${server.name}": ${message}`, { cause: error })
        } finally {
          progress.flush()
        }
        // The compatibility shape of old protocol versions: a bare value, shown as JSON.
        if (!('content' in result) && 'toolResult' in result) return result.toolResult as ToolReturn
        return mcpCallResult(result as McpCallToolResult, origin)
      },
    })
  } catch (error) {
    throw new McpServerError({
      server: server.name,
      reason: `cannot mount the tool "${tool.name}": ${thrownMessage(error)}`,
      cause: error,
    })
  }
}

/**
 * Connects MCP servers and turns their tools into Yoke tool definitions. Stdio servers are
 * started here (with only the environment passed to them) and started again by the next call after
 * they died; URL servers get a Streamable HTTP session, opened again (and the call retried once)
 * when the server says it expired; injected clients are used as they are. Each call passes on the
 * turn's signal (the server gets `notifications/cancelled`) and relays the server's progress as
 * coalesced live `tools/progress` events.
 * Names the model would refuse get a stable short hash; a name two servers share is qualified by
 * each server's name (`server_tool`), and {@link McpToolset.mounted} reports every rename. Input
 * schemas are passed to the model as the server wrote them. If any server fails, every one
 * already opened is closed before the error is thrown.
 *
 * @example
 * ```ts
 * await using toolset = await connectMcpServers([mcpServer({ name: 'files', command: 'mcp-files' })])
 * agent.ctx.tools.register(toolset.tools) // visible to this agent only
 * ```
 *
 * @param servers - declarations from {@link mcpServer}, each name once
 * @returns the toolset; close it (or the plugin closes it on harness close)
 * @throws {@link McpServerError} `MCP_SERVER_FAILED` naming the server: initialize timed out or
 *   failed, the tool list failed, repeats a name or has a tool that cannot be defined (a schema that
 *   is not an object schema); `MissingPeerError` for a stdio or URL server without `@modelcontextprotocol/sdk`
 */
export async function connectMcpServers(servers: readonly McpServer[]): Promise<McpToolset> {
  const names = new Set<string>()
  for (const server of servers) {
    if (names.has(server.name)) throw new McpServerError({ server: server.name, reason: 'is declared twice' })
    names.add(server.name)
  }
  const clients: McpConnection[] = []
  let closed: Promise<void> | undefined
  const close = (): Promise<void> => {
    closed ??= Promise.allSettled(clients.map((client) => client.close())).then(() => undefined)
    return closed
  }
  try {
    const listed: ListedServer[] = []
    for (const server of servers) {
      const timeoutMs = server.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
      const client = await openMcpConnection(server, timeoutMs)
      clients.push(client)
      const tools = await listAll(server, client, timeoutMs)
      checkUnique(server.name, tools)
      listed.push({ server, client, tools })
    }
    const assigned = assignNames(listed)
    const tools: ToolDefinition[] = []
    const mounted: McpMountedTool[] = []
    for (const entry of listed)
      for (const tool of entry.tools) {
        const { name, renamed } = assigned.get(tool) as { name: string; renamed?: McpRenameReason }
        tools.push(defineMcpTool(entry, tool, name))
        mounted.push(
          Object.freeze({
            server: entry.server.name,
            tool: tool.name,
            name,
            ...(renamed === undefined ? {} : { renamed }),
            mode: isParallel(tool) ? ('parallel' as const) : ('exclusive' as const),
          }),
        )
      }
    return Object.freeze({
      tools: Object.freeze(tools),
      mounted: Object.freeze(mounted),
      close,
      [Symbol.asyncDispose]: close,
    })
  } catch (error) {
    await close()
    throw error
  }
}
