/**
 * `yoke/mcp`: the tools of MCP servers as Yoke tools, on the optional peer `@modelcontextprotocol/sdk`.
 *
 * @module
 */
export { connectMcpServers, type McpMountedTool, type McpToolset } from './connect-mcp-servers.js'
export type {
  McpCallToolResult,
  McpClientLike,
  McpContentBlock,
  McpInputSchema,
  McpLegacyToolResult,
  McpProgress,
  McpRequestOptions,
  McpToolAnnotations,
  McpToolInfo,
  McpToolList,
} from './mcp-client-like.js'
export { type McpPluginOptions, mcpPlugin } from './mcp-plugin.js'
export {
  type McpClientServerSpec,
  type McpHttpServerSpec,
  type McpServer,
  type McpServerCommon,
  type McpServerKind,
  type McpServerSpec,
  type McpStdioServerSpec,
  mcpServer,
} from './mcp-server.js'
export { McpServerError } from './mcp-server-error.js'
export type { McpRenameReason } from './mcp-tool-name.js'
